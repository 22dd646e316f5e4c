// Package svc is the Go client of the svc API: what a Go script running as a svc job needs
// (GetVariable, GetResource, GetResumeUrls, as the TypeScript svc-client and the Python svc
// package offer them) and what a Go program outside svc needs to run scripts and flows and read
// their results.
//
// Inside a job, the package-level functions read the job's environment (OV_TOKEN, OV_WORKSPACE,
// BASE_INTERNAL_URL, OV_JOB_ID) on every call, never caching it:
//
//	secret, err := svc.GetVariable(ctx, "u/alice/api_key")
//
// Outside a job, build a client with an explicit base URL, token and workspace:
//
//	client := svc.NewClient("http://127.0.0.1:8000", token, "main")
//	result, err := client.RunSync(ctx, "u/alice/hello", map[string]any{"name": "Ada"})
//
// The module uses the standard library only, so it builds with no network: svc ships it, and Go
// scripts import it as "svc" with nothing to download.
package svc
