import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, waitForJob, type TestServer } from './harness.js';

/**
 * The flow editor's test run (`jobs/run/preview_flow`, Windmill's shape), in both shells: a flow
 * that is not saved runs with its steps and result, checked as a save would check it; nothing is
 * listed as a version of the path, no `fv/` URL runs it again, and only someone who may write and
 * run a flow at the path may test-run it.
 */

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const VALUE = {
  modules: [
    { id: 'greet', value: { type: 'rawscript', language: 'bun', content: 'export function main(name: string) { console.log("greeting " + name); return "hello " + name }', input_transforms: { name: { type: 'javascript', expr: 'flow_input.name' } } } },
    { id: 'shout', value: { type: 'rawscript', language: 'bun', content: 'export function main(x: string) { return x.toUpperCase() }', input_transforms: { x: { type: 'javascript', expr: 'results.greet' } } } },
  ],
};

beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s?.stop();
});

describe('a test run of an unsaved flow', () => {
  it('runs the flow as sent, its steps and result as for a saved one, and stores no version of the path', async () => {
    const res = await s.fetch(`${ws()}/jobs/run/preview_flow`, { ...json({ path: 'u/admin/draft_flow', value: VALUE, args: { name: 'ada' } }), headers: { 'content-type': 'application/json', 'x-svc-trigger': 'console' } });
    const id = await res.text();
    expect(res.status, id).toBe(201);
    const job = await waitForJob(s, id, 45_000);
    expect(job).toMatchObject({ status: 'success', result: 'HELLO ADA', script_path: 'u/admin/draft_flow', trigger: 'console' });
    expect((await s.fetch(`${ws()}/flows/get/u/admin/draft_flow`)).status).toBe(404);
    expect((await s.fetch(`${ws()}/flows/history/p/u/admin/draft_flow`)).status).toBe(404);
    // Its version is the run's alone: no fv/ URL starts it again.
    expect((await s.fetch(`${ws()}/jobs/run/fv/${job.flow_version}`, json({ name: 'bob' }))).status).toBe(404);
  });

  it('is not listed among the versions of a saved flow at the same path', async () => {
    expect((await s.post(`${ws()}/flows/create`, { path: 'u/admin/saved_flow', value: VALUE })).status).toBe(201);
    const before = await (await s.fetch(`${ws()}/flows/history/p/u/admin/saved_flow`)).json();
    const res = await s.fetch(`${ws()}/jobs/run/preview_flow`, json({ path: 'u/admin/saved_flow', value: { modules: [VALUE.modules[0]] }, args: { name: 'cy' } }));
    expect(res.status).toBe(201);
    expect((await waitForJob(s, await res.text(), 45_000)).result).toBe('hello cy');
    expect(await (await s.fetch(`${ws()}/flows/history/p/u/admin/saved_flow`)).json()).toEqual(before);
    expect((await (await s.fetch(`${ws()}/flows/get/u/admin/saved_flow`)).json()).value.modules).toHaveLength(2);
  });

  it("takes Windmill's own fields at their defaults, on the body and its steps, as a save does, and refuses one that is set naming where", async () => {
    const windmill = (tag: string | null) => ({ modules: VALUE.modules.map((m) => ({ ...m, value: { ...m.value, tag, concurrent_limit: null, assets: [] } })) });
    const res = await s.fetch(`${ws()}/jobs/run/preview_flow`, json({ path: 'u/admin/draft_flow', value: windmill(null), args: { name: 'di' }, tag: null }));
    expect(res.status, await res.clone().text()).toBe(201);
    expect((await waitForJob(s, await res.text(), 45_000)).result).toBe('HELLO DI');
    const tagged = await s.fetch(`${ws()}/jobs/run/preview_flow`, json({ path: 'u/admin/draft_flow', value: windmill('gpu'), args: { name: 'di' } }));
    expect(tagged.status).toBe(400);
    expect((await tagged.json()).error).toMatchObject({ field: 'value.modules.0.value.tag', message: expect.stringContaining('worker groups') });
  });

  it("waits for the result at run_wait_result/preview_flow, in the caller's own folder without a path", async () => {
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/preview_flow`, json({ value: VALUE, args: { name: 'fay' }, tag: null, restarted_from: null }));
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toBe('HELLO FAY');
    const [run] = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=u/admin/preview_flow`)).json();
    expect(run).toMatchObject({ status: 'success', result: 'HELLO FAY' });
    expect((await s.fetch(`${ws()}/flows/get/u/admin/preview_flow`)).status).toBe(404);
    const restarted = await s.fetch(`${ws()}/jobs/run_wait_result/preview_flow`, json({ value: VALUE, args: { name: 'fay' }, restarted_from: { step_id: 'shout' } }));
    expect(restarted.status).toBe(400);
    expect((await restarted.json()).error.field).toBe('restarted_from');
  });

  it('refuses what a save would refuse, and those who may not write a flow there, with 4xx and starts nothing', async () => {
    const before = (await (await s.fetch(`${ws()}/jobs/list?per_page=1000`)).json()).length;
    for (const body of [
      { path: 'nowhere', value: VALUE, args: {} },
      { path: 'u/admin/draft_flow', value: { modules: [VALUE.modules[0], VALUE.modules[0]] }, args: {} },
      { path: 'u/admin/draft_flow', value: { modules: [{ id: 'bad', value: { type: 'rawscript', language: 'bun', content: 'no main', input_transforms: {} } }] }, args: {} },
      { path: 'u/admin/draft_flow', value: VALUE, args: [] },
      { path: 'u/admin/draft_flow', value: VALUE, args: {}, extra: 1 },
    ]) {
      expect((await s.fetch(`${ws()}/jobs/run/preview_flow`, json(body))).status, JSON.stringify(body)).toBe(400);
    }
    expect((await s.post('/api/users/create', { username: 'opal', email: 'opal@example.com', password: 'opal-password-1' })).status).toBe(201);
    expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'opal', role: 'operator' })).status).toBe(201);
    const login = await s.fetch('/api/auth/login', { ...json({ email: 'opal@example.com', password: 'opal-password-1' }), token: null });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const denied = await s.fetch(`${ws()}/jobs/run/preview_flow`, { ...json({ path: 'u/opal/draft', value: VALUE, args: {} }), token: null, headers: { cookie, 'content-type': 'application/json' } });
    expect(denied.status).toBe(403);
    expect((await s.fetch(`${ws()}/jobs/run/preview_flow`, { ...json({ path: 'u/admin/draft_flow', value: VALUE, args: {} }), token: null })).status).toBe(401);
    expect((await (await s.fetch(`${ws()}/jobs/list?per_page=1000`)).json()).length).toBe(before);
  });
});
