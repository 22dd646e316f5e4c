module svc

go 1.19
