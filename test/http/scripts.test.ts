import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.stop());

const ws = () => `/api/w/${s.workspace}`;

describe('workspaces', () => {
  it('creates a workspace and refuses a duplicate or a bad id', async () => {
    const created = await s.post('/api/workspaces/create', { id: 'team-a', name: 'Team A' });
    expect(created.status).toBe(201);
    expect(await created.text()).toBe('team-a');
    expect((await s.post('/api/workspaces/create', { id: 'team-a', name: 'again' })).status).toBe(409);
    const bad = await s.post('/api/workspaces/create', { id: 'Bad Id!', name: 'x' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.field).toBe('id');
    const missing = await s.post('/api/workspaces/create', { id: 'team-b' });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error.message).toMatch(/^name/);
  });

  it('answers 404 for an unknown workspace and route', async () => {
    const res = await s.fetch('/api/w/nope/scripts/list');
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe('not_found');
    expect((await s.fetch('/api/nothing/here')).status).toBe(404);
  });
});

describe('scripts', () => {
  it('creates versions addressed by hash, latest by path', async () => {
    const v1 = await createScript(s, 'u/admin/greet', 'bun', 'export function main(name: string, greeting = "hi") { return `${greeting} ${name} v1`; }');
    const conflictRes = await s.post(`${ws()}/scripts/create`, { path: 'u/admin/greet', language: 'bun', content: 'export function main() { return 0 }' });
    expect(conflictRes.status).toBe(409);
    expect((await conflictRes.json()).error.message).toContain(v1);
    const v2 = await createScript(s, 'u/admin/greet', 'bun', 'export function main(name: string, greeting = "hi") { return `${greeting} ${name} v2`; }', { parent_hash: v1 });
    expect(v2).not.toBe(v1);

    const latest = await (await s.fetch(`${ws()}/scripts/get/p/u/admin/greet`)).json();
    expect(latest.hash).toBe(v2);
    expect(latest.schema.properties).toEqual({ name: { type: 'string' }, greeting: { type: 'string', default: 'hi' } });
    expect(latest.schema.required).toEqual(['name']);
    const old = await (await s.fetch(`${ws()}/scripts/get/h/${v1}`)).json();
    expect(old.content).toContain('v1');

    const byPath = await s.fetch(`${ws()}/jobs/run_wait_result/p/u/admin/greet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Ada"}' });
    expect(await byPath.json()).toBe('hi Ada v2');
    const byHash = await s.fetch(`${ws()}/jobs/run_wait_result/h/${v1}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Ada","greeting":"hello"}' });
    expect(await byHash.json()).toBe('hello Ada v1');
    const asyncByHash = await s.fetch(`${ws()}/jobs/run/h/${v1}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Bo"}' });
    expect(asyncByHash.status).toBe(201);
    expect((await waitForJob(s, await asyncByHash.text())).result).toBe('hi Bo v1');

    const list = await (await s.fetch(`${ws()}/scripts/list`)).json();
    expect(list.map((x: any) => x.path)).toContain('u/admin/greet');
    expect(list[0].content).toBeUndefined();
  });

  it('infers Python and Bash schemas', async () => {
    await createScript(s, 'f/demo/py', 'python3', 'def main(x: int, tags: list = ["a"], flag: bool = False):\n    return x\n');
    const py = await (await s.fetch(`${ws()}/scripts/get/p/f/demo/py`)).json();
    expect(py.schema.properties.x).toEqual({ type: 'integer' });
    expect(py.schema.required).toEqual(['x']);
    await createScript(s, 'f/demo/sh', 'bash', 'msg="$1"\ncount="${2:-3}"\necho "$msg"\n');
    const sh = await (await s.fetch(`${ws()}/scripts/get/p/f/demo/sh`)).json();
    expect(Object.keys(sh.schema.properties)).toEqual(['msg', 'count']);
    expect(sh.schema.properties.count.default).toBe('3');
  });

  it('rejects bad paths, languages and bodies with 4xx naming the field, changing nothing', async () => {
    for (const path of ['admin/x', 'x/admin/y', 'u/admin', 'u/../x', 'u/admin/bad name']) {
      const res = await s.post(`${ws()}/scripts/create`, { path, language: 'bun', content: 'export function main(){}' });
      expect(res.status, path).toBe(400);
      expect((await res.json()).error.field).toBe('path');
    }
    const lang = await s.post(`${ws()}/scripts/create`, { path: 'u/admin/l', language: 'cobol', content: '' });
    expect(lang.status).toBe(400);
    expect((await lang.json()).error.field).toBe('language');
    const noMain = await s.post(`${ws()}/scripts/create`, { path: 'u/admin/nomain', language: 'python3', content: 'print(1)' });
    expect(noMain.status).toBe(400);
    const malformed = await s.fetch(`${ws()}/scripts/create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"path": ' });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error.code).toBe('invalid_json');
    const wrongType = await s.fetch(`${ws()}/scripts/create`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(wrongType.status).toBe(415);
    const list = await (await s.fetch(`${ws()}/scripts/list`)).json();
    expect(list.map((x: any) => x.path)).not.toContain('u/admin/l');
    expect(list.map((x: any) => x.path)).not.toContain('u/admin/nomain');
  });

  it('deletes every version of a path', async () => {
    const h = await createScript(s, 'u/admin/gone', 'bash', 'echo bye');
    expect((await s.fetch(`${ws()}/scripts/delete/p/u/admin/gone`, { method: 'POST' })).status).toBe(200);
    expect((await s.fetch(`${ws()}/scripts/get/p/u/admin/gone`)).status).toBe(404);
    expect((await s.fetch(`${ws()}/scripts/get/h/${h}`)).status).toBe(404);
    expect((await s.fetch(`${ws()}/jobs/run/p/u/admin/gone`, { method: 'POST' })).status).toBe(404);
    expect((await s.fetch(`${ws()}/scripts/delete/p/u/admin/gone`, { method: 'POST' })).status).toBe(404);
  });
});

describe('auth', () => {
  it('needs a token, by header or query', async () => {
    const none = await s.fetch(`${ws()}/scripts/list`, { token: null });
    expect(none.status).toBe(401);
    expect((await none.json()).error.code).toBe('unauthorized');
    expect((await s.fetch(`${ws()}/scripts/list`, { token: 'wrong' })).status).toBe(401);
    expect((await s.fetch(`${ws()}/scripts/list?token=${s.token}`, { token: null })).status).toBe(200);
    expect((await s.fetch(`${ws()}/jobs/run_wait_result/p/u/admin/greet?token=nope`, { method: 'POST', token: null })).status).toBe(401);
  });

  it('lets a job token act only in its workspace and never manage', async () => {
    await createScript(s, 'u/admin/whoami', 'bun', 'export async function main() { return process.env.OV_TOKEN }');
    const jobToken = await (await s.fetch(`${ws()}/jobs/run_wait_result/p/u/admin/whoami`, { method: 'POST' })).json();
    expect(typeof jobToken).toBe('string');
    // The job token died with its job.
    expect((await s.fetch(`${ws()}/scripts/list`, { token: jobToken })).status).toBe(401);

    await createScript(s, 'u/admin/use_token', 'bun', `export async function main() {
      const h = { authorization: 'Bearer ' + process.env.OV_TOKEN };
      const base = process.env.BASE_INTERNAL_URL;
      const own = await fetch(base + '/api/w/' + process.env.OV_WORKSPACE + '/scripts/list', { headers: h });
      const other = await fetch(base + '/api/w/team-a/scripts/list', { headers: h });
      const create = await fetch(base + '/api/workspaces/create', { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body: '{"id":"evil","name":"x"}' });
      return [own.status, other.status, create.status];
    }`);
    const statuses = await (await s.fetch(`${ws()}/jobs/run_wait_result/p/u/admin/use_token`, { method: 'POST' })).json();
    expect(statuses).toEqual([200, 403, 403]);
  });

  it('reports the version without a token', async () => {
    const res = await s.fetch('/api/version', { token: null });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`svc v${packageJson.version}`);
  });
});
