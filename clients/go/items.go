package svc

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// ResumeUrls are the URLs of one approval of a suspended step (spec 4.8): a request to Resume
// counts one approval, a request to Cancel cancels, ApprovalPage shows both to a person.
type ResumeUrls struct {
	// Resume counts one approval when requested (GET, or POST with the form's values).
	Resume string `json:"resume"`
	// Cancel cancels the step, and with it the flow, when requested.
	Cancel string `json:"cancel"`
	// ApprovalPage is the page showing the step's approval form and buttons.
	ApprovalPage string `json:"approvalPage"`
}

// GetResource returns the value of the resource at path (`u/alice/db` or `$res:u/alice/db`),
// with any `$var:` references inside it resolved.
func (c *Client) GetResource(ctx context.Context, path string) (any, error) {
	var value any
	err := c.GetResourceInto(ctx, path, &value)
	return value, err
}

// GetResourceInto decodes the value of the resource at path into out, e.g. a struct with json tags.
func (c *Client) GetResourceInto(ctx context.Context, path string, out any) error {
	op := fmt.Sprintf("GetResource(%q)", path)
	stripped, err := stripPrefix(path, "$res:", op)
	if err != nil {
		return err
	}
	return c.getJSON(ctx, "resources/get_value_interpolated/"+encodePath(stripped), op, out)
}

// GetVariable returns the value of the variable at path (`u/alice/key` or `$var:u/alice/key`);
// a secret variable comes back decrypted.
func (c *Client) GetVariable(ctx context.Context, path string) (string, error) {
	op := fmt.Sprintf("GetVariable(%q)", path)
	stripped, err := stripPrefix(path, "$var:", op)
	if err != nil {
		return "", err
	}
	var body struct {
		Value *string `json:"value"`
	}
	if err := c.getJSON(ctx, "variables/get/"+encodePath(stripped), op, &body); err != nil {
		return "", err
	}
	if body.Value == nil {
		return "", fmt.Errorf("svc: %s: the API answered without a value", op)
	}
	return *body.Value, nil
}

// GetResumeUrls returns resume and cancel URLs for the running job as an approval step, plus its
// approval page. Each call makes a fresh resume id, so each set handed out counts as one
// approval. approver names who the URLs are meant for ("" for nobody in particular). With
// flowLevel the URLs are pre-approvals of the flow, counted by any later suspend step of it.
// It needs the job's id, so only a client from FromEnv (or the package-level function) has it.
func (c *Client) GetResumeUrls(ctx context.Context, approver string, flowLevel bool) (ResumeUrls, error) {
	const op = "GetResumeUrls()"
	var urls ResumeUrls
	if c.jobID == "" {
		return urls, fmt.Errorf("svc: %s: OV_JOB_ID is not set; resume URLs exist only for a running svc job", op)
	}
	var random [4]byte
	if _, err := rand.Read(random[:]); err != nil {
		return urls, fmt.Errorf("svc: %s: %w", op, err)
	}
	resumeID := strconv.FormatUint(uint64(binary.BigEndian.Uint32(random[:])), 10)
	query := url.Values{}
	if approver != "" {
		query.Set("approver", approver)
	}
	if flowLevel {
		query.Set("flow_level", "true")
	}
	route := "jobs/resume_urls/" + url.PathEscape(c.jobID) + "/" + resumeID
	if len(query) > 0 {
		route += "?" + query.Encode()
	}
	err := c.getJSON(ctx, route, op, &urls)
	return urls, err
}

// GetResource is Client.GetResource for the running job (see FromEnv).
func GetResource(ctx context.Context, path string) (any, error) {
	client, err := FromEnv()
	if err != nil {
		return nil, err
	}
	return client.GetResource(ctx, path)
}

// GetResourceInto is Client.GetResourceInto for the running job (see FromEnv).
func GetResourceInto(ctx context.Context, path string, out any) error {
	client, err := FromEnv()
	if err != nil {
		return err
	}
	return client.GetResourceInto(ctx, path, out)
}

// GetVariable is Client.GetVariable for the running job (see FromEnv).
func GetVariable(ctx context.Context, path string) (string, error) {
	client, err := FromEnv()
	if err != nil {
		return "", err
	}
	return client.GetVariable(ctx, path)
}

// GetResumeUrls is Client.GetResumeUrls for the running job (see FromEnv).
func GetResumeUrls(ctx context.Context, approver string, flowLevel bool) (ResumeUrls, error) {
	client, err := FromEnv()
	if err != nil {
		return ResumeUrls{}, err
	}
	return client.GetResumeUrls(ctx, approver, flowLevel)
}

// stripPrefix accepts `$res:u/x/y` as well as `u/x/y`, so a bound argument can be passed on.
func stripPrefix(path, prefix, op string) (string, error) {
	stripped := strings.TrimPrefix(path, prefix)
	if stripped == "" {
		return "", fmt.Errorf(`svc: %s needs a path such as "u/alice/db"`, op)
	}
	return stripped, nil
}

// jsonOf is json.RawMessage's null for an empty answer.
func jsonOf(data []byte) json.RawMessage {
	if len(data) == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(data)
}
