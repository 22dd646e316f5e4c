import { beforeAll, describe, expect, it } from 'vitest';
import { createScript, inProcessService, json, type InProcessService } from './harness.js';

/**
 * The HTTP routes through Hono's app.request(), against the in-memory shell: status codes, bodies
 * and headers for workspaces, scripts, auth, runs and job reads. test/http/scripts.test.ts checks
 * the same over a real socket, in both shells.
 */

let s: InProcessService;
beforeAll(async () => {
  s = await inProcessService();
});

const ws = '/api/w/main';

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
    expect(await s.store.getWorkspace('team-b')).toBeNull();
  });

  it('answers 404 with a JSON error for an unknown workspace and route', async () => {
    const res = await s.fetch('/api/w/nope/scripts/list');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await res.json()).error.code).toBe('not_found');
    expect((await s.fetch('/api/nothing/here')).status).toBe(404);
  });
});

describe('scripts', () => {
  it('creates versions addressed by hash, latest by path, and runs either', async () => {
    const v1 = await createScript(s, 'u/admin/greet', 'export function main(name: string, greeting = "hi") { return `${greeting} ${name} v1`; }');
    const conflictRes = await s.post(`${ws}/scripts/create`, { path: 'u/admin/greet', language: 'bun', content: 'export function main() { return 0 }' });
    expect(conflictRes.status).toBe(409);
    expect((await conflictRes.json()).error.message).toContain(v1);
    const v2 = await createScript(s, 'u/admin/greet', 'export function main(name: string, greeting = "hi") { return `${greeting} ${name} v2`; }', { parent_hash: v1 });
    expect(v2).not.toBe(v1);

    const latest = await (await s.fetch(`${ws}/scripts/get/p/u/admin/greet`)).json();
    expect(latest.hash).toBe(v2);
    expect(latest.schema.properties).toEqual({ name: { type: 'string' }, greeting: { type: 'string', default: 'hi' } });
    expect(latest.schema.required).toEqual(['name']);
    expect((await (await s.fetch(`${ws}/scripts/get/h/${v1}`)).json()).content).toContain('v1');

    const byPath = await s.fetch(`${ws}/jobs/run_wait_result/p/u/admin/greet`, json({ name: 'Ada' }));
    expect(byPath.status).toBe(200);
    expect(await byPath.json()).toBe('hi Ada v2');
    const byHash = await s.fetch(`${ws}/jobs/run_wait_result/h/${v1}`, json({ name: 'Ada', greeting: 'hello' }));
    expect(await byHash.json()).toBe('hello Ada v1');
    const asyncByHash = await s.fetch(`${ws}/jobs/run/h/${v1}`, json({ name: 'Bo' }));
    expect(asyncByHash.status).toBe(201);
    expect((await s.job(await asyncByHash.text())).result).toBe('hi Bo v1');

    const list = await (await s.fetch(`${ws}/scripts/list`)).json();
    expect(list.map((x: { path: string }) => x.path)).toContain('u/admin/greet');
    expect(list[0].content).toBeUndefined();
  });

  it('rejects bad paths, languages and bodies with 4xx naming the field, changing nothing', async () => {
    for (const path of ['admin/x', 'x/admin/y', 'u/admin', 'u/../x', 'u/admin/bad name']) {
      const res = await s.post(`${ws}/scripts/create`, { path, language: 'bun', content: 'export function main(){}' });
      expect(res.status, path).toBe(400);
      expect((await res.json()).error.field).toBe('path');
    }
    const lang = await s.post(`${ws}/scripts/create`, { path: 'u/admin/l', language: 'cobol', content: '' });
    expect(lang.status).toBe(400);
    expect((await lang.json()).error.field).toBe('language');
    const noMain = await s.post(`${ws}/scripts/create`, { path: 'u/admin/nomain', language: 'python3', content: 'print(1)' });
    expect(noMain.status).toBe(400);
    const malformed = await s.fetch(`${ws}/scripts/create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"path": ' });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error.code).toBe('invalid_json');
    const wrongType = await s.fetch(`${ws}/scripts/create`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(wrongType.status).toBe(415);
    for (const path of ['u/admin/l', 'u/admin/nomain']) expect(await s.store.getLatestScript('main', path)).toBeNull();
  });

  it('deletes every version of a path', async () => {
    const h = await createScript(s, 'u/admin/gone', 'export function main() { return "bye" }');
    // Run once by path and by hash first: versions the worker has seen must not outlive the delete.
    expect(await (await s.fetch(`${ws}/jobs/run_wait_result/h/${h}`, { method: 'POST' })).json()).toBe('bye');
    expect((await s.fetch(`${ws}/scripts/delete/p/u/admin/gone`, { method: 'POST' })).status).toBe(200);
    expect((await s.fetch(`${ws}/jobs/run_wait_result/h/${h}`, { method: 'POST' })).status).toBe(404);
    expect((await s.fetch(`${ws}/scripts/get/p/u/admin/gone`)).status).toBe(404);
    expect((await s.fetch(`${ws}/scripts/get/h/${h}`)).status).toBe(404);
    expect((await s.fetch(`${ws}/jobs/run/p/u/admin/gone`, { method: 'POST' })).status).toBe(404);
    expect((await s.fetch(`${ws}/scripts/delete/p/u/admin/gone`, { method: 'POST' })).status).toBe(404);
  });
});

describe('auth', () => {
  it('needs a token, by header or query', async () => {
    const none = await s.fetch(`${ws}/scripts/list`, { token: null });
    expect(none.status).toBe(401);
    expect((await none.json()).error.code).toBe('unauthorized');
    expect((await s.fetch(`${ws}/scripts/list`, { token: 'wrong' })).status).toBe(401);
    expect((await s.fetch(`${ws}/scripts/list?token=${s.token}`, { token: null })).status).toBe(200);
    expect((await s.fetch(`${ws}/jobs/run_wait_result/p/u/admin/greet?token=nope`, { method: 'POST', token: null })).status).toBe(401);
  });

  it('lets a job token act only in its workspace and never manage, and refuses it once the job is done', async () => {
    await createScript(s, 'u/admin/whoami', 'export async function main() { return process.env.OV_TOKEN }');
    const jobToken = await (await s.fetch(`${ws}/jobs/run_wait_result/p/u/admin/whoami`, { method: 'POST' })).json();
    expect(typeof jobToken).toBe('string');
    expect((await s.fetch(`${ws}/scripts/list`, { token: jobToken })).status).toBe(401);

    await createScript(s, 'u/admin/use_token', `export async function main() {
      const h = { authorization: 'Bearer ' + process.env.OV_TOKEN };
      const base = process.env.BASE_INTERNAL_URL;
      const own = await fetch(base + '/api/w/' + process.env.OV_WORKSPACE + '/scripts/list', { headers: h });
      const other = await fetch(base + '/api/w/team-a/scripts/list', { headers: h });
      const create = await fetch(base + '/api/workspaces/create', { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body: '{"id":"evil","name":"x"}' });
      return [own.status, other.status, create.status];
    }`);
    await s.post('/api/workspaces/create', { id: 'team-a', name: 'Team A' });
    const statuses = await (await s.fetch(`${ws}/jobs/run_wait_result/p/u/admin/use_token`, { method: 'POST' })).json();
    expect(statuses).toEqual([200, 403, 403]);
    expect(await s.store.getWorkspace('evil')).toBeNull();
  });

  it('reports the version without a token', async () => {
    const res = await s.fetch('/api/version', { token: null });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('svc vtest');
  });
});

describe('jobs', () => {
  it('returns a uuid, then status, result, logs and the list; 404 for a job of another workspace', async () => {
    await createScript(s, 'u/admin/logs', 'export function main(n: number) { console.log("counting", n); return n * 2 }');
    const res = await s.fetch(`${ws}/jobs/run/p/u/admin/logs`, json({ n: 21 }));
    expect(res.status).toBe(201);
    const id = await res.text();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const job = await s.job(id);
    expect(job).toMatchObject({ id, status: 'success', success: true, result: 42, args: { n: 21 } });
    expect(job.logs).toContain('counting 21');
    const result = await s.fetch(`${ws}/jobs_u/completed/get_result/${id}`);
    expect(await result.json()).toBe(42);
    const list = await (await s.fetch(`${ws}/jobs/list?script_path_exact=u/admin/logs`)).json();
    expect(list.map((j: { id: string }) => j.id)).toEqual([id]);
    expect((await s.fetch(`${ws}/jobs/list?per_page=0`)).status).toBe(400);
    expect((await s.fetch(`${ws}/jobs/list?status=done`)).status).toBe(400);

    await s.post('/api/workspaces/create', { id: 'team-c', name: 'C' });
    expect((await s.fetch(`/api/w/team-c/jobs_u/get/${id}`)).status).toBe(404);
    expect((await s.fetch(`${ws}/jobs_u/get/00000000-0000-0000-0000-000000000000`)).status).toBe(404);
  });

  it('answers a failing script with 200 and the error object on the sync route, failed on the async one', async () => {
    await createScript(s, 'u/admin/boom', 'export function main() { throw new TypeError("no way") }');
    const sync = await s.fetch(`${ws}/jobs/run_wait_result/p/u/admin/boom`, json({}));
    expect(sync.status).toBe(200);
    expect((await sync.json()).error).toMatchObject({ name: 'TypeError', message: 'no way' });
    const id = await (await s.fetch(`${ws}/jobs/run/p/u/admin/boom`, json({}))).text();
    expect(await s.job(id)).toMatchObject({ status: 'failed', success: false, result: { error: { name: 'TypeError' } } });
  });

  it('shapes sync responses with svc_status_code, svc_content_type and svc_headers', async () => {
    await createScript(s, 'u/admin/shaped', 'export function main() { return { svc_status_code: 202, svc_content_type: "text/csv", svc_headers: { "x-extra": "1" }, result: "a,b" } }');
    const res = await s.fetch(`${ws}/jobs/run_wait_result/p/u/admin/shaped`, json({}));
    expect(res.status).toBe(202);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('x-extra')).toBe('1');
  });
});
