import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * The script editor's test run (`jobs/run/preview`, Windmill's shape) and live input form
 * (`scripts/infer_schema`), in both shells: unsaved code runs with its logs and result, nothing is
 * stored as a version, and only someone who may write and run a script at the path may test-run it.
 */

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const tokens: Record<string, string> = {};

const PYTHON = 'def main(name: str, times: int = 2):\n    print("hello from the editor")\n    return {"greeting": ("hi " + name + " ") * times}\n';

async function person(username: string, role: 'developer' | 'operator'): Promise<string> {
  expect((await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password-1` })).status).toBe(201);
  expect((await s.post(`${ws()}/workspaces/add_user`, { username, role })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password-1` }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const created = await s.fetch('/api/users/tokens/create', { ...json({ label: 'own' }), token: null, headers: { cookie, 'content-type': 'application/json' } });
  expect(created.status).toBe(201);
  return created.text();
}

beforeAll(async () => {
  s = await startServer();
  expect((await s.post(`${ws()}/folders/create`, { name: 'team', extra_perms: { 'u/opal': false } })).status).toBe(201);
  tokens.dev = await person('devi', 'developer');
  tokens.op = await person('opal', 'operator');
  await createScript(s, 'f/team/saved', 'bash', 'echo "\\"saved\\""');
});
afterAll(async () => {
  await s?.stop();
});

describe('a test run of unsaved code', () => {
  it('runs the code with the given arguments, shows its logs and result, and stores no version', async () => {
    const res = await s.fetch(`${ws()}/jobs/run/preview`, json({ path: 'u/admin/draft', language: 'python3', content: PYTHON, args: { name: 'ada' } }));
    expect(res.status, await res.clone().text()).toBe(201);
    const job = await waitForJob(s, await res.text(), 60_000);
    expect(job.status).toBe('success');
    expect(job.result).toEqual({ greeting: 'hi ada hi ada ' });
    expect(job.logs).toContain('hello from the editor');
    expect(job.script_path).toBe('u/admin/draft');
    expect((await s.fetch(`${ws()}/scripts/get/p/u/admin/draft`)).status).toBe(404);
    // Its code is not kept once it ended: the run cannot be started again by its hash.
    expect((await s.fetch(`${ws()}/jobs/run/h/${job.script_hash}`, json({ name: 'x' }))).status).toBe(404);
  });

  it('reports a failing script like any run', async () => {
    const res = await s.fetch(`${ws()}/jobs/run/preview`, json({ path: 'u/admin/draft', language: 'bash', content: 'echo "about to fail"\nexit 3', args: {} }));
    expect(res.status).toBe(201);
    const job = await waitForJob(s, await res.text(), 30_000);
    expect(job.status).toBe('failed');
    expect(job.logs).toContain('about to fail');
  });

  it('needs the rights to write and to run a script at the path', async () => {
    const body = { path: 'f/team/draft', language: 'bash', content: 'echo 1', args: {} };
    // An operator may run f/team/saved but write nothing: no test run either.
    expect((await s.fetch(`${ws()}/jobs/run/p/f/team/saved`, { ...json({}), token: tokens.op })).status).toBe(201);
    expect((await s.fetch(`${ws()}/jobs/run/preview`, { ...json(body), token: tokens.op })).status).toBe(403);
    // A developer may test-run in their own space, and not in a folder they have no rights on.
    expect((await s.fetch(`${ws()}/jobs/run/preview`, { ...json({ ...body, path: 'u/devi/draft' }), token: tokens.dev })).status).toBe(201);
    expect((await s.fetch(`${ws()}/jobs/run/preview`, { ...json(body), token: tokens.dev })).status).toBe(403);
    expect((await s.fetch(`${ws()}/jobs/run/preview`, { ...json(body), token: null })).status).toBe(401);
  });

  it("waits for the result at run_wait_result/preview, runs in the caller's own folder without a path, and takes Windmill's fields at their defaults", async () => {
    const windmill = { language: 'bash', content: 'name="$1"\necho "\\"hi $name\\""', args: { name: 'eve' }, kind: 'code', tag: null, dedicated_worker: false, lock: null, modules: null, script_hash: null };
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/preview`, { ...json(windmill), token: tokens.dev });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toBe('hi eve');
    const jobs = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=u/devi/preview`)).json();
    expect(jobs).toHaveLength(1);
    expect((await s.fetch(`${ws()}/scripts/get/p/u/devi/preview`)).status).toBe(404);
    // A Windmill field that asks for something svc does not do is named, and nothing runs.
    for (const [field, value] of [['kind', 'identity'], ['tag', 'gpu'], ['script_hash', 'abc']] as const) {
      const refused = await s.fetch(`${ws()}/jobs/run_wait_result/preview`, { ...json({ ...windmill, [field]: value }), token: tokens.dev });
      expect(refused.status, field).toBe(400);
      expect((await refused.json()).error.field).toBe(field);
    }
    // An operator writes no script, so has no test run of its own either.
    expect((await s.fetch(`${ws()}/jobs/run_wait_result/preview`, { ...json(windmill), token: tokens.op })).status).toBe(403);
    expect(await (await s.fetch(`${ws()}/jobs/list?script_path_exact=u/devi/preview`)).json()).toHaveLength(1);
    expect(await (await s.fetch(`${ws()}/jobs/list?script_path_exact=u/opal/preview`)).json()).toHaveLength(0);
  });

  it('refuses bad input with a 400 and starts nothing', async () => {
    const before = (await (await s.fetch(`${ws()}/jobs/list?per_page=1000`)).json()).length;
    for (const body of [
      { path: 'u/admin/draft', language: 'python3', content: 'print(1)', args: {} },
      { path: 'u/admin/draft', language: 'cobol', content: 'x', args: {} },
      { path: '../etc', language: 'bash', content: 'echo 1', args: {} },
      { path: 'u/admin/draft', language: 'bash', content: 'echo 1', args: [] },
      { path: 'u/admin/draft', language: 'bash', content: 'echo 1', extra: true },
    ]) {
      const res = await s.fetch(`${ws()}/jobs/run/preview`, json(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await (await s.fetch(`${ws()}/jobs/list?per_page=1000`)).json()).length).toBe(before);
  });
});

describe('the live input schema', () => {
  it('is inferred from the code without storing anything', async () => {
    const res = await s.fetch(`${ws()}/scripts/infer_schema`, json({ language: 'python3', content: PYTHON }));
    expect(res.status).toBe(200);
    const schema = await res.json();
    expect(schema.properties.name.type).toBe('string');
    expect(schema.properties.times).toMatchObject({ type: 'integer', default: 2 });
    expect(schema.required).toEqual(['name']);
  });

  it('names what it cannot read, and is refused to an operator', async () => {
    const res = await s.fetch(`${ws()}/scripts/infer_schema`, json({ language: 'python3', content: 'print(1)' }));
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toMatch(/main/);
    expect((await s.fetch(`${ws()}/scripts/infer_schema`, { ...json({ language: 'bash', content: 'echo 1' }), token: tokens.op })).status).toBe(403);
  });
});
