package svc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Client calls the svc API of one workspace with one token. Its fields may be set directly; a
// zero HTTPClient means http.DefaultClient.
type Client struct {
	// BaseURL is where svc answers, e.g. "http://127.0.0.1:8000" (without /api).
	BaseURL string
	// Token is an API token or a job's OV_TOKEN, sent as a Bearer token.
	Token string
	// Workspace is the id of the workspace every call addresses.
	Workspace string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// jobID is the running job's id (OV_JOB_ID), which GetResumeUrls needs.
	jobID string
}

// NewClient returns a client for a program outside svc: the base URL, an API token and a
// workspace id.
func NewClient(baseURL, token, workspace string) *Client {
	return &Client{BaseURL: baseURL, Token: token, Workspace: workspace}
}

// FromEnv returns a client for the running job, from the variables svc gives every job:
// BASE_INTERNAL_URL, OV_TOKEN, OV_WORKSPACE (and OV_JOB_ID when set). It fails, naming the
// variable, when one of the first three is missing: outside a job, use NewClient.
func FromEnv() (*Client, error) {
	values := map[string]string{}
	for _, name := range []string{"BASE_INTERNAL_URL", "OV_TOKEN", "OV_WORKSPACE"} {
		value := os.Getenv(name)
		if value == "" {
			return nil, fmt.Errorf("svc: %s is not set; the client works inside a svc job, which is given it (outside one, use NewClient)", name)
		}
		values[name] = value
	}
	client := NewClient(values["BASE_INTERNAL_URL"], values["OV_TOKEN"], values["OV_WORKSPACE"])
	client.jobID = os.Getenv("OV_JOB_ID")
	return client, nil
}

// APIError is a non-2xx answer of the API. Status is the HTTP status, Code and Message the
// API's error code and message; the error text never holds the token.
type APIError struct {
	// Op is the call that failed, e.g. `GetVariable("u/alice/key")`.
	Op string
	// Status is the HTTP status code of the answer.
	Status int
	// Code is the API's error code (e.g. "not_found"), empty when the answer had none.
	Code string
	// Message is the API's message, or the start of the body when it was not the API's JSON.
	Message string
}

// Error reads "svc: <op> failed with status <status>: <message>", as the other clients' errors.
func (e *APIError) Error() string {
	return fmt.Sprintf("svc: %s failed with status %d: %s", e.Op, e.Status, e.Message)
}

// IsNotFound reports whether err is an APIError with status 404.
func IsNotFound(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound
}

// request sends one call to /api/w/<workspace>/<route> and returns the body of a 2xx answer.
func (c *Client) request(ctx context.Context, method, route, op string, body any) ([]byte, error) {
	if c.BaseURL == "" || c.Token == "" || c.Workspace == "" {
		return nil, fmt.Errorf("svc: %s: the client needs a base URL, a token and a workspace", op)
	}
	base := strings.TrimRight(c.BaseURL, "/")
	target := base + "/api/w/" + url.PathEscape(c.Workspace) + "/" + route
	var reader io.Reader
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("svc: %s: the arguments are not JSON: %w", op, err)
		}
		reader = bytes.NewReader(encoded)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, reader)
	if err != nil {
		return nil, fmt.Errorf("svc: %s: %w", op, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	httpClient := c.HTTPClient
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("svc: %s: %w", op, ctxErr)
		}
		// url.Error repeats the URL, which is fine (no token in it); the cause says refused, DNS, reset.
		return nil, fmt.Errorf("svc: %s: could not reach %s: %w", op, base, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("svc: %s: reading the answer: %w", op, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		code, message := errorOf(data, resp.Status)
		return nil, &APIError{Op: op, Status: resp.StatusCode, Code: code, Message: message}
	}
	return data, nil
}

// getJSON GETs a route and decodes its JSON answer into out.
func (c *Client) getJSON(ctx context.Context, route, op string, out any) error {
	data, err := c.request(ctx, http.MethodGet, route, op, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("svc: %s: the API answered something that is not the expected JSON: %w", op, err)
	}
	return nil
}

// errorOf reads the API's {"error": {"code", "message"}}; anything else is shown briefly.
func errorOf(data []byte, status string) (string, string) {
	var shaped struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &shaped) == nil && shaped.Error.Message != "" {
		return shaped.Error.Code, shaped.Error.Message
	}
	text := strings.TrimSpace(string(data))
	if len(text) > 200 {
		text = text[:200]
	}
	if text == "" {
		text = status
	}
	return "", text
}

// encodePath escapes each segment of an item path, so the slashes of f/folder/name stay separators.
func encodePath(path string) string {
	segments := strings.Split(path, "/")
	for i, segment := range segments {
		segments[i] = url.PathEscape(segment)
	}
	return strings.Join(segments, "/")
}
