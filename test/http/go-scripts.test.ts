import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';
import { newProject, target as cliTarget } from '../cli/cli-harness.js';
import type { GoTarget } from '../../functions/ports.js';
import { prebuiltGoBinary, type GoBinaryUpload } from '../../functions/runtime/go-prebuilt.js';

/**
 * Go scripts (issue 23) as a user meets them over HTTP: built at create (a build error answers
 * 400 with main.go:line:col), run confined with typed arguments, the svc client importable with
 * no network, `$var:` bindings, logs, errors, and an approval step calling GetResumeUrls. The AWS
 * shell builds nothing: a create carries a binary built for its sandbox (by svc sync push, or here
 * by the real Go toolchain), which the sandbox Lambda fetches from S3 and runs confined.
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

const ASK = `package inner

import (
	"context"

	"svc"
)

func main(approver string) (svc.ResumeUrls, error) {
	return svc.GetResumeUrls(context.Background(), approver, false)
}
`;
const AFTER = 'package inner\n\nfunc main(resume map[string]any) (map[string]any, error) {\n\treturn map[string]any{"approved_with": resume}, nil\n}\n';

/** Creates and runs the flow; its first step suspends with the Go script's resume URLs, resuming finishes it. */
async function expectApprovalFlow(flow: unknown): Promise<void> {
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
}

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

  it('announce no Go target: this shell builds Go scripts itself, from their source', async () => {
    expect((await (await s.fetch('/api/runtime')).json()).go_target).toBeNull();
  });

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

  it('fail a job past the CPU time limit with an error naming the limit, and serve the next', async () => {
    await createScript(s, 'u/admin/go_spin', 'go', 'package main\n\nfunc main(spin bool) (int, error) {\n\tn := 0\n\tfor spin {\n\t\tn++\n\t}\n\treturn n, nil\n}\n');
    expect((await s.post(`${ws()}/workspaces/job_limits`, { cpu_seconds: 1 })).status).toBe(200);
    try {
      expect(await runSync('u/admin/go_spin', { spin: true })).toEqual({ error: { name: 'CpuLimitExceeded', message: 'CPU time limit 1s exceeded' } });
      expect(await runSync('u/admin/go_spin', { spin: false })).toBe(0);
    } finally {
      await s.post(`${ws()}/workspaces/job_limits`, {});
    }
  }, 120_000);

  it('ask for approval in a flow step with GetResumeUrls, and go on once approved', async () => {
    const flow = {
      path: 'u/admin/go_approval',
      value: {
        modules: [
          { id: 'ask', value: { type: 'rawscript', language: 'go', content: ASK, input_transforms: { approver: { type: 'static', value: 'bob' } } }, suspend: { required_events: 1 } },
          { id: 'after', value: { type: 'rawscript', language: 'go', content: AFTER, input_transforms: { resume: { type: 'javascript', expr: 'resume' } } } },
        ],
      },
    };
    await expectApprovalFlow(flow);
  }, 180_000);
});

describe.skipIf(!aws)('go scripts (AWS shell)', () => {
  const HELLO = 'package inner\n\nfunc main(name string) (string, error) {\n\treturn "hello " + name, nil\n}\n';
  const target = async (): Promise<GoTarget> => (await (await s.fetch('/api/runtime')).json()).go_target;
  const createWithBinary = (path: string, content: string, goBinary: GoBinaryUpload) => s.post(`${ws()}/scripts/create`, { path, language: 'go', content, go_binary: goBinary });

  it('are refused at create without a binary, naming how to build one for the sandbox', async () => {
    const res = await create('u/admin/go_hello', HELLO);
    expect(res.status).toBe(400);
    const { error } = await res.json();
    expect(error).toMatchObject({ code: 'language_unavailable', message: expect.stringContaining('no go toolchain') });
    expect(error.message).toContain(`go_binary, their binary built for GOOS=linux GOARCH=${(await target()).goarch}`);
  });

  it('announce the sandbox platform Go binaries are built for', async () => {
    expect(await target()).toEqual({ goos: 'linux', goarch: process.arch === 'arm64' ? 'arm64' : 'amd64' });
  });

  it('take a binary built for the sandbox, and run it there reading a secret variable and a connection over the sync webhook', async () => {
    expect((await s.post(`${ws()}/variables/create`, { path: 'u/admin/go_secret', value: 'open-sesame', is_secret: true })).status).toBe(201);
    const db = { host: 'db.internal', port: 5432, user: 'app', dbname: 'orders', password: '$var:u/admin/go_secret' };
    expect((await s.post(`${ws()}/resources/create`, { path: 'u/admin/go_db', resource_type: 'postgresql', value: db })).status).toBe(201);
    const created = await createWithBinary('u/admin/go_connect', CONNECT, await prebuiltGoBinary(CONNECT, await target()));
    expect(created.status, await created.clone().text()).toBe(201);
    const script = await (await s.fetch(`${ws()}/scripts/get/p/u/admin/go_connect`)).json();
    expect(script.schema.order).toEqual(['apiKey', 'opts', 'verbose']);

    const result = await runSync('u/admin/go_connect', { apiKey: '$var:u/admin/go_secret', opts: { table: 'orders', tags: ['a'] } });
    expect(result).toMatchObject({ bound: true, password_ok: true, table: 'orders', tags: ['a'], verbose: false, has_token: true });
    // Confined in the sandbox as the local runner confines it: never the user running the sandbox.
    expect(result.uid).not.toBe(process.getuid?.());

    const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/go_connect`, json({ apiKey: 'x', opts: { table: 't', tags: [] } }))).text();
    const job = await waitForJob(s, id, 60_000);
    expect(job).toMatchObject({ status: 'success', language: 'go', result: { bound: false } });
    expect(job.logs).toContain('connecting to db.internal');
    expect(job.logs).not.toContain('open-sesame');
  }, 240_000);

  it('refuse a binary of another script, for another architecture or not matching its sha256, and create nothing', async () => {
    const goTarget = await target();
    const other = await prebuiltGoBinary(HELLO.replace('hello ', 'bye '), goTarget);
    const swapped = await createWithBinary('u/admin/go_swapped', HELLO, other);
    expect(swapped.status).toBe(400);
    expect((await swapped.json()).error.message).toContain("not built from this script's content");

    const own = await prebuiltGoBinary(HELLO, goTarget);
    const elf = gunzipSync(Buffer.from(own.gzip_base64, 'base64'));
    elf.writeUInt16LE(goTarget.goarch === 'arm64' ? 0x3e : 0xb7, 18); // e_machine of the other architecture
    const foreign = await createWithBinary('u/admin/go_foreign', HELLO, { gzip_base64: gzipSync(elf).toString('base64'), sha256: createHash('sha256').update(elf).digest('hex') });
    expect(foreign.status).toBe(400);
    expect((await foreign.json()).error.message).toContain(`built for another architecture: the sandbox runs GOOS=linux GOARCH=${goTarget.goarch}`);

    const tampered = await createWithBinary('u/admin/go_tampered', HELLO, { ...own, sha256: createHash('sha256').update('something else').digest('hex') });
    expect(tampered.status).toBe(400);
    expect((await tampered.json()).error.message).toContain('its sha256 is not that of the binary sent');

    const notGzip = await createWithBinary('u/admin/go_notgzip', HELLO, { gzip_base64: Buffer.from('#!/bin/sh\n').toString('base64'), sha256: own.sha256 });
    expect(notGzip.status).toBe(400);
    for (const path of ['go_swapped', 'go_foreign', 'go_tampered', 'go_notgzip']) {
      expect((await s.fetch(`${ws()}/scripts/get/p/u/admin/${path}`)).status).toBe(404);
    }
    // A binary is only for Go.
    const python = await s.post(`${ws()}/scripts/create`, { path: 'u/admin/py_binary', language: 'python3', content: 'def main():\n    return 1\n', go_binary: own });
    expect(python.status).toBe(400);
  }, 240_000);

  it('are built and uploaded by svc sync push, and run over the sync webhook', async () => {
    const project = newProject();
    expect((await project.svc(['init'])).code).toBe(0);
    project.write('f/ops/greet.go', HELLO);
    const pushed = await project.svc(['sync', 'push', '--yes', ...cliTarget(s, s.workspace)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(await runSync('f/ops/greet', { name: 'gopher' })).toBe('hello gopher');

    project.write('f/ops/greet.go', HELLO.replace('"hello " + name', 'undefinedName'));
    const broken = await project.svc(['sync', 'push', '--yes', ...cliTarget(s, s.workspace)]);
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toContain('main.go:4:9: undefined: undefinedName');
    expect(await runSync('f/ops/greet', { name: 'gopher' })).toBe('hello gopher');

    // Without sync: `svc go-binary` prints the go_binary field for a create with curl.
    project.write('hello.go', HELLO);
    const built = await project.svc(['go-binary', 'hello.go', '--goarch', (await target()).goarch]);
    expect(built.code, built.stderr).toBe(0);
    const created = await createWithBinary('u/admin/go_curl', HELLO, JSON.parse(built.stdout));
    expect(created.status, await created.clone().text()).toBe(201);
    expect(await runSync('u/admin/go_curl', { name: 'curl' })).toBe('hello curl');
  }, 240_000);

  it('ask for approval in a flow step with GetResumeUrls, and go on once approved', async () => {
    const goTarget = await target();
    for (const [path, content] of [['u/admin/go_ask', ASK], ['u/admin/go_after', AFTER]]) {
      const created = await createWithBinary(path, content, await prebuiltGoBinary(content, goTarget));
      expect(created.status, await created.clone().text()).toBe(201);
    }
    const flow = {
      path: 'u/admin/go_approval',
      value: {
        modules: [
          { id: 'ask', value: { type: 'script', path: 'u/admin/go_ask', input_transforms: { approver: { type: 'static', value: 'bob' } } }, suspend: { required_events: 1 } },
          { id: 'after', value: { type: 'script', path: 'u/admin/go_after', input_transforms: { resume: { type: 'javascript', expr: 'resume' } } } },
        ],
      },
    };
    await expectApprovalFlow(flow);
  }, 240_000);
});
