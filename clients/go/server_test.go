package svc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"
)

// These tests call a running svc. svc's `npm test` starts one, creates the items below and runs
// `go test` with SVC_TEST_URL, SVC_TEST_TOKEN and SVC_TEST_WORKSPACE (test/unit/clients/go-client.test.ts);
// without them they are skipped.
//
//	u/admin/echo      a script returning {"name": name, "times": times}
//	u/admin/boom      a script that throws "boom"
//	u/admin/api_key   a secret variable, value "k-123"
//	u/admin/db        a postgresql resource whose password is "$var:u/admin/api_key"
func serverClient(t *testing.T) (*Client, context.Context) {
	t.Helper()
	base := os.Getenv("SVC_TEST_URL")
	if base == "" {
		t.Skip("SVC_TEST_URL is not set: no svc to test against (npm test sets it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return NewClient(base, os.Getenv("SVC_TEST_TOKEN"), os.Getenv("SVC_TEST_WORKSPACE")), ctx
}

func TestServerReadsASecretVariableAndAResource(t *testing.T) {
	client, ctx := serverClient(t)
	value, err := client.GetVariable(ctx, "u/admin/api_key")
	if err != nil || value != "k-123" {
		t.Fatalf("GetVariable = %q, %v", value, err)
	}
	var db struct {
		Host     string `json:"host"`
		Password string `json:"password"`
	}
	if err := client.GetResourceInto(ctx, "$res:u/admin/db", &db); err != nil {
		t.Fatal(err)
	}
	if db.Host != "db.internal" || db.Password != "k-123" {
		t.Fatalf("resource = %+v", db)
	}
}

func TestServerRunsAScriptSyncAsyncAndWaits(t *testing.T) {
	client, ctx := serverClient(t)
	args := map[string]any{"name": "Ada", "times": 2}
	want := `{"name":"Ada","times":2}`

	result, err := client.RunSync(ctx, "u/admin/echo", args)
	if err != nil || compact(t, result) != want {
		t.Fatalf("RunSync = %s, %v", result, err)
	}

	id, err := client.RunAsync(ctx, "u/admin/echo", args)
	if err != nil || id == "" {
		t.Fatalf("RunAsync = %q, %v", id, err)
	}
	job, err := client.Wait(ctx, id)
	if err != nil || job.Status != "success" || compact(t, job.Result) != want {
		t.Fatalf("Wait = %+v, %v", job, err)
	}
	stored, err := client.GetResult(ctx, id)
	if err != nil || compact(t, stored) != want {
		t.Fatalf("GetResult = %s, %v", stored, err)
	}

	result, err = client.RunAndWait(ctx, "u/admin/echo", args)
	if err != nil || compact(t, result) != want {
		t.Fatalf("RunAndWait = %s, %v", result, err)
	}
}

func TestServerReportsAFailedJobAndApiErrors(t *testing.T) {
	client, ctx := serverClient(t)
	_, err := client.RunAndWait(ctx, "u/admin/boom", nil)
	var failed *JobFailedError
	if !errors.As(err, &failed) || failed.Job.Status != "failed" {
		t.Fatalf("RunAndWait(boom) error = %v", err)
	}

	_, err = client.GetVariable(ctx, "u/admin/missing")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Message == "" || !IsNotFound(err) {
		t.Fatalf("GetVariable(missing) error = %#v", err)
	}

	_, err = NewClient(client.BaseURL, "not-a-token", client.Workspace).RunAsync(ctx, "u/admin/echo", nil)
	if !errors.As(err, &apiErr) || apiErr.Status != 401 {
		t.Fatalf("RunAsync with a bad token error = %#v", err)
	}
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var value any
	if err := json.Unmarshal(raw, &value); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	out, _ := json.Marshal(value)
	return string(out)
}
