package svc

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// seen is one request a fake API received.
type seen struct{ method, uri, auth string }

// fakeAPI answers from routes (keyed by the raw request URI) and records every request.
func fakeAPI(t *testing.T, routes map[string]string) (*httptest.Server, *[]seen) {
	t.Helper()
	var requests []seen
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, seen{r.Method, r.RequestURI, r.Header.Get("Authorization")})
		for prefix, body := range routes {
			if strings.HasPrefix(r.RequestURI, prefix) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(body))
				return
			}
		}
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"error":{"code":"forbidden","message":"not yours"}}`))
	}))
	t.Cleanup(server.Close)
	return server, &requests
}

func jobEnv(t *testing.T, base string) {
	t.Setenv("BASE_INTERNAL_URL", base+"/")
	t.Setenv("OV_TOKEN", "job-token-SECRET")
	t.Setenv("OV_WORKSPACE", "my ws")
	t.Setenv("OV_JOB_ID", "job-1")
}

func TestJobFunctionsReadTheEnvironmentAndEncodePaths(t *testing.T) {
	server, requests := fakeAPI(t, map[string]string{
		"/api/w/my%20ws/variables/get/f/team%20a/key%3F":             `{"path":"f/team a/key?","value":"s3cret"}`,
		"/api/w/my%20ws/resources/get_value_interpolated/u/alice/db": `{"host":"db.internal","port":5432}`,
	})
	jobEnv(t, server.URL)
	ctx := context.Background()
	value, err := GetVariable(ctx, "$var:f/team a/key?")
	if err != nil || value != "s3cret" {
		t.Fatalf("GetVariable = %q, %v", value, err)
	}
	resource, err := GetResource(ctx, "$res:u/alice/db")
	if err != nil {
		t.Fatal(err)
	}
	if got := resource.(map[string]any)["host"]; got != "db.internal" {
		t.Fatalf("GetResource host = %v", got)
	}
	var typed struct {
		Port int `json:"port"`
	}
	if err := GetResourceInto(ctx, "u/alice/db", &typed); err != nil || typed.Port != 5432 {
		t.Fatalf("GetResourceInto = %+v, %v", typed, err)
	}
	for _, r := range *requests {
		if r.method != "GET" || r.auth != "Bearer job-token-SECRET" {
			t.Fatalf("unexpected request %+v", r)
		}
	}
}

func TestGetResumeUrlsAsksForAFreshResumeIdOfTheJob(t *testing.T) {
	server, requests := fakeAPI(t, map[string]string{
		"/api/w/my%20ws/jobs/resume_urls/job-1/": `{"resume":"http://x/resume","cancel":"http://x/cancel","approvalPage":"http://x/page"}`,
	})
	jobEnv(t, server.URL)
	urls, err := GetResumeUrls(context.Background(), "bob@example.com", true)
	if err != nil {
		t.Fatal(err)
	}
	if urls != (ResumeUrls{Resume: "http://x/resume", Cancel: "http://x/cancel", ApprovalPage: "http://x/page"}) {
		t.Fatalf("GetResumeUrls = %+v", urls)
	}
	if _, err := GetResumeUrls(context.Background(), "", false); err != nil {
		t.Fatal(err)
	}
	first, second := (*requests)[0].uri, (*requests)[1].uri
	if !strings.HasSuffix(first, "?approver=bob%40example.com&flow_level=true") || strings.Contains(second, "?") {
		t.Fatalf("query strings: %s, %s", first, second)
	}
	if strings.Split(first, "?")[0] == second {
		t.Fatalf("two calls used the same resume id: %s", second)
	}
}

func TestErrorsCarryTheStatusAndTheMessageButNeverTheToken(t *testing.T) {
	server, _ := fakeAPI(t, map[string]string{})
	jobEnv(t, server.URL)
	_, err := GetVariable(context.Background(), "u/alice/key")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 403 || apiErr.Code != "forbidden" || apiErr.Message != "not yours" {
		t.Fatalf("error = %#v", err)
	}
	if !strings.Contains(err.Error(), `GetVariable("u/alice/key") failed with status 403: not yours`) || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("error text = %s", err)
	}
}

func TestOutsideAJobTheClientSaysWhatIsMissing(t *testing.T) {
	t.Setenv("OV_TOKEN", "")
	t.Setenv("BASE_INTERNAL_URL", "http://127.0.0.1:1")
	t.Setenv("OV_WORKSPACE", "main")
	if _, err := GetVariable(context.Background(), "u/a/v"); err == nil || !strings.Contains(err.Error(), "OV_TOKEN is not set") {
		t.Fatalf("error = %v", err)
	}
	client := NewClient("http://127.0.0.1:1", "t", "main")
	if _, err := client.GetResumeUrls(context.Background(), "", false); err == nil || !strings.Contains(err.Error(), "OV_JOB_ID") {
		t.Fatalf("error = %v", err)
	}
	if _, err := client.GetVariable(context.Background(), "u/a/v"); err == nil || !strings.Contains(err.Error(), "could not reach http://127.0.0.1:1") {
		t.Fatalf("error = %v", err)
	}
}

func TestEveryCallStopsWithItsContext(t *testing.T) {
	block := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer server.Close()
	defer close(block)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewClient(server.URL, "t", "main").RunSync(ctx, "u/a/slow", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v", err)
	}
}
