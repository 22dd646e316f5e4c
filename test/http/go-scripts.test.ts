import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Go scripts (issue 23) as a user meets them over HTTP: built at create (a build error answers
 * 400 with main.go:line:col), run confined with typed arguments, the svc client importable with
 * no network, `$var:` bindings, logs, errors, and an approval step calling GetResumeUrls. The AWS
 * shell has no Go toolchain where scripts are created, and says so.
 */
let s: TestServer;
const aws = process.env.SVC_TEST_SHELL === 'aws';
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const runSync = async (path: string, body: unknown = {}) => (await s.fetch(`${ws()}/jobs/run_wait_result/p/${path}`, json(body))).json();
const create = (path: string, content: string) => s.post(`${ws()}/scripts/create`, { path, language: 'go', content });

const CONNECT = `package inner

import (
	"context"
	"fmt"
	"os"

	"svc"
)

type Options struct {
	Table string   \`json:"table"\`
	Limit int      \`json:"limit,omitempty"\`
	Tags  []string \`json:"tags"\`
}

func main(apiKey string, opts Options, verbose *bool) (map[string]any, error) {
	ctx := context.Background()
	secret, err := svc.GetVariable(ctx, "u/admin/go_secret")
	if err != nil {
		return nil, err
	}
	var db struct {
		Host     string \`json:"host"\`
		Password string \`json:"password"\`
	}
	if err := svc.GetResourceInto(ctx, "u/admin/go_db", &db); err != nil {
		return nil, err
	}
	fmt.Println("connecting to", db.Host)
	return map[string]any{
		"bound":       apiKey == secret,
		"password_ok": db.Password == secret,
		"table":       opts.Table,
		"limit":       opts.Limit,
		"tags":        opts.Tags,
		"verbose":     verbose != nil && *verbose,
		"uid":         os.Getuid(),
		"has_token":   os.Getenv("OV_TOKEN") != "",
	}, nil
}
`;

beforeAll(async () => {
  s = await startServer({ env: { SVC_JOB_TIMEOUT_SECONDS: '60' } });
});
afterAll(() => s?.stop());

describe.skipIf(aws)('go scripts (local shell)', () => {
  it('infer their schema from main, read a secret and a connection through the client, and run over the sync webhook', async () => {
    expect((await s.post(`${ws()}/variables/create`, { path: 'u/admin/go_secret', value: 'open-sesame', is_secret: true })).status).toBe(201);
    const db = { host: 'db.internal', port: 5432, user: 'app', dbname: 'orders', password: '$var:u/admin/go_secret' };
    expect((await s.post(`${ws()}/resources/create`, { path: 'u/admin/go_db', resource_type: 'postgresql', value: db })).status).toBe(201);
    await createScript(s, 'u/admin/go_connect', 'go', CONNECT);

    const script = await (await s.fetch(`${ws()}/scripts/get/p/u/admin/go_connect`)).json();
    expect(script.schema).toMatchObject({
      order: ['apiKey', 'opts', 'verbose'],
      required: ['apiKey', 'opts'],
      properties: {
        apiKey: { type: 'string' },
        opts: { type: 'object', properties: { table: { type: 'string' }, limit: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['table', 'tags'] },
        verbose: { type: 'boolean' },
      },
    });

    const result = await runSync('u/admin/go_connect', { apiKey: '$var:u/admin/go_secret', opts: { table: 'orders', tags: ['a', 'b'] }, verbose: true });
    expect(result).toMatchObject({ bound: true, password_ok: true, table: 'orders', limit: 0, tags: ['a', 'b'], verbose: true, has_token: true });
    // Confined like every job: never the service's own user.
    expect(result.uid).not.toBe(process.getuid?.());

    const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/go_connect`, json({ apiKey: 'x', opts: { table: 't', tags: [] } }))).text();
    const job = await waitForJob(s, id);
    expect(job).toMatchObject({ status: 'success', language: 'go', result: { bound: false } });
    expect(job.logs).toContain('connecting to db.internal');
    expect(job.logs).not.toContain('open-sesame');
    // The first build on a machine compiles Go's standard library too (about a minute when busy).
  }, 240_000);

  it('refuse a script that does not build, with the file, line and column', async () => {
    const syntax = await create('u/admin/go_syntax', 'package inner\n\nfunc main(x int) (int, error) {\n\treturn x +, nil\n}\n');
    expect(syntax.status).toBe(400);
    expect((await syntax.json()).error.message).toContain('main.go:4:');
    const typeError = await create('u/admin/go_type', 'package inner\n\nfunc main(x int) (int, error) {\n\treturn y, nil\n}\n');
    expect(typeError.status).toBe(400);
    expect((await typeError.json()).error.message).toContain('main.go:4:9: undefined: y');
    const noResult = await create('u/admin/go_noresult', 'package inner\n\nfunc main(x int) int {\n\treturn x\n}\n');
    expect((await noResult.json()).error.message).toContain('main must return two values, (T, error)');
    // Nothing was created.
    expect((await s.fetch(`${ws()}/scripts/get/p/u/admin/go_type`)).status).toBe(404);
  }, 120_000);

  it('refuse other modules with a clear message when the instance has no Go module proxy', async () => {
    const res = await create('u/admin/go_module', 'package inner\n\nimport "github.com/google/uuid"\n\nfunc main() (string, error) {\n\treturn uuid.NewString(), nil\n}\n');
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toContain('imports github.com/google/uuid: this server builds Go scripts with the standard library and the svc client only');
  });

  it('fail the job with main\'s error, a panic or arguments that do not fit, and log what it printed', async () => {
    await createScript(
      s,
      'u/admin/go_fail',
      'go',
      'package main\n\nimport (\n\t"errors"\n\t"fmt"\n)\n\nfunc main(n int, mode string) (int, error) {\n\tfmt.Println("mode", mode)\n\tif mode == "panic" {\n\t\tpanic("boom")\n\t}\n\tif mode == "error" {\n\t\treturn 0, errors.New("n is wrong")\n\t}\n\treturn n * 2, nil\n}\n',
    );
    expect(await runSync('u/admin/go_fail', { n: 21, mode: 'ok' })).toBe(42);
    expect(await runSync('u/admin/go_fail', { n: 1, mode: 'error' })).toEqual({ error: expect.objectContaining({ name: 'Error', message: 'n is wrong' }) });
    expect(await runSync('u/admin/go_fail', { n: 1, mode: 'panic' })).toEqual({ error: expect.objectContaining({ name: 'panic', message: 'boom' }) });
    const misfit = await runSync('u/admin/go_fail', { n: 'many', mode: 'ok' });
    expect(misfit.error.message).toContain('the argument n does not fit its type int');
  }, 120_000);

  it('ask for approval in a flow step with GetResumeUrls, and go on once approved', async () => {
    const ask = `package inner

import (
	"context"

	"svc"
)

func main(approver string) (svc.ResumeUrls, error) {
	return svc.GetResumeUrls(context.Background(), approver, false)
}
`;
    const after = 'package inner\n\nfunc main(resume map[string]any) (map[string]any, error) {\n\treturn map[string]any{"approved_with": resume}, nil\n}\n';
    const flow = {
      path: 'u/admin/go_approval',
      value: {
        modules: [
          { id: 'ask', value: { type: 'rawscript', language: 'go', content: ask, input_transforms: { approver: { type: 'static', value: 'bob' } } }, suspend: { required_events: 1 } },
          { id: 'after', value: { type: 'rawscript', language: 'go', content: after, input_transforms: { resume: { type: 'javascript', expr: 'resume' } } } },
        ],
      },
    };
    const created = await s.post(`${ws()}/flows/create`, flow);
    expect(created.status, await created.clone().text()).toBe(201);
    const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/go_approval`, json({}))).text();
    let job: any;
    for (const deadline = Date.now() + 30_000; job?.status !== 'suspended' && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    }
    expect(job.status).toBe('suspended');
    const urls = job.flow_status.results.ask;
    expect(urls.resume).toContain('/jobs_u/resume/');
    expect(urls.cancel).toContain('/jobs_u/cancel/');
    expect(urls.approvalPage).toBeTruthy();
    const resumed = await s.fetch(new URL(urls.resume).pathname + new URL(urls.resume).search, json({ ok: 'yes' }));
    expect(resumed.status).toBe(200);
    expect((await waitForJob(s, id, 30_000)).result).toEqual({ approved_with: { ok: 'yes' } });
  }, 180_000);
});

describe.skipIf(!aws)('go scripts (AWS shell)', () => {
  it('are refused at create: the AWS shell has no Go toolchain where scripts are created', async () => {
    const res = await create('u/admin/go_hello', 'package inner\n\nfunc main(name string) (string, error) {\n\treturn "hello " + name, nil\n}\n');
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'language_unavailable', message: expect.stringContaining('no go toolchain') });
  });
});
