package svc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Job is a job as GET jobs_u/get answers it (the fields a caller usually reads).
type Job struct {
	// ID is the job's uuid.
	ID string `json:"id"`
	// Status is one of queued, running, suspended, awaiting_approval, success, failed, canceled.
	Status string `json:"status"`
	// Success is set once the job finished: true for success.
	Success *bool `json:"success"`
	// Result is the job's result once it finished; a failed job's is {"error": {...}}.
	Result json.RawMessage `json:"result"`
	// Logs is what the job printed so far.
	Logs string `json:"logs"`
	// ScriptPath is the path of the script or flow the job runs.
	ScriptPath string `json:"script_path"`
	// Language is the language of the job's script.
	Language string `json:"language"`
	// CreatedAt, StartedAt and CompletedAt are RFC 3339 times; the last two are empty until then.
	CreatedAt   string `json:"created_at"`
	StartedAt   string `json:"started_at"`
	CompletedAt string `json:"completed_at"`
}

// Finished reports whether the job reached a final status (success, failed or canceled).
func (j Job) Finished() bool {
	return j.Status == "success" || j.Status == "failed" || j.Status == "canceled"
}

// JobFailedError is what Wait and RunAndWait return for a job that failed or was canceled.
type JobFailedError struct {
	// Job is the finished job; its Result holds {"error": {"name", "message"}}.
	Job Job
}

// Error names the job and the message of its error.
func (e *JobFailedError) Error() string {
	var failure struct {
		Error struct {
			Name    string `json:"name"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(e.Job.Result, &failure)
	if failure.Error.Message == "" {
		return fmt.Sprintf("svc: job %s %s", e.Job.ID, e.Job.Status)
	}
	return fmt.Sprintf("svc: job %s %s: %s: %s", e.Job.ID, e.Job.Status, failure.Error.Name, failure.Error.Message)
}

// RunAsync starts the script or flow at path (latest version) with args (any JSON-encodable
// value, usually a map or a struct; nil for none) and returns the new job's id at once.
func (c *Client) RunAsync(ctx context.Context, path string, args any) (string, error) {
	data, err := c.request(ctx, http.MethodPost, "jobs/run/p/"+encodePath(path), fmt.Sprintf("RunAsync(%q)", path), argsOrEmpty(args))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

// RunSync runs the script or flow at path with args over the sync webhook, waits for it and
// returns its result as JSON. A failed job's result is {"error": {...}}, as the webhook answers
// it; a result shaped with svc_status_code is an APIError when that status is not 2xx.
func (c *Client) RunSync(ctx context.Context, path string, args any) (json.RawMessage, error) {
	data, err := c.request(ctx, http.MethodPost, "jobs/run_wait_result/p/"+encodePath(path), fmt.Sprintf("RunSync(%q)", path), argsOrEmpty(args))
	if err != nil {
		return nil, err
	}
	return jsonOf(data), nil
}

// GetJob returns the job with id as it is now.
func (c *Client) GetJob(ctx context.Context, id string) (Job, error) {
	var job Job
	err := c.getJSON(ctx, "jobs_u/get/"+encodePath(id), fmt.Sprintf("GetJob(%q)", id), &job)
	return job, err
}

// GetResult returns the result of the finished job with id (a 404 APIError while it runs).
func (c *Client) GetResult(ctx context.Context, id string) (json.RawMessage, error) {
	data, err := c.request(ctx, http.MethodGet, "jobs_u/completed/get_result/"+encodePath(id), fmt.Sprintf("GetResult(%q)", id), nil)
	if err != nil {
		return nil, err
	}
	return jsonOf(data), nil
}

// Wait polls the job with id until it finishes or ctx ends, and returns it. A job that failed
// or was canceled comes back with a *JobFailedError.
func (c *Client) Wait(ctx context.Context, id string) (Job, error) {
	delay := 50 * time.Millisecond
	for {
		job, err := c.GetJob(ctx, id)
		if err != nil {
			return job, err
		}
		if job.Finished() {
			if job.Status != "success" {
				return job, &JobFailedError{Job: job}
			}
			return job, nil
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return job, fmt.Errorf("svc: waiting for job %s: %w", id, ctx.Err())
		case <-timer.C:
		}
		// Quick jobs answer at once; long ones are polled at most once a second.
		if delay < time.Second {
			delay *= 2
		}
	}
}

// RunAndWait starts the script or flow at path with args, waits for it and returns its result
// (a *JobFailedError when it failed or was canceled).
func (c *Client) RunAndWait(ctx context.Context, path string, args any) (json.RawMessage, error) {
	id, err := c.RunAsync(ctx, path, args)
	if err != nil {
		return nil, err
	}
	job, err := c.Wait(ctx, id)
	if err != nil {
		return nil, err
	}
	return jsonOf(job.Result), nil
}

// argsOrEmpty sends {} for no arguments, which every webhook accepts.
func argsOrEmpty(args any) any {
	if args == nil {
		return map[string]any{}
	}
	return args
}
