import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * What started a run (issue 22): every entry point records its trigger on the job, the run list
 * shows it and filters by it, the run page names it, and a bad trigger is a 400 that starts nothing.
 */

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  s.fetch(`${ws()}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
type Listed = { id: string; trigger: string | null };
const runs = async (query: string) => {
  const res = await s.fetch(`${ws()}/jobs/runs?${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { runs: Listed[] }).runs;
};
const started = async (res: Response) => {
  expect(res.status, await res.clone().text()).toBe(201);
  const id = await res.text();
  expect((await waitForJob(s, id)).status).toBe('success');
  return id;
};

beforeAll(async () => {
  s = await startServer();
  await createScript(s, 'u/admin/trig_echo', 'bash', 'echo "{\\"x\\": \\"$1\\"}"', { schema: { type: 'object', properties: { x: { type: 'string' } }, required: [] } });
  const flow = await s.post(`${ws()}/flows/create`, {
    path: 'u/admin/trig_flow',
    summary: 'one step',
    value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bash', content: 'echo 1', input_transforms: {} } }] },
  });
  expect(flow.status, await flow.clone().text()).toBe(201);
  const route = await s.post(`${ws()}/http_triggers/create`, {
    path: 'u/admin/trig_route',
    route_path: 'trig/echo',
    http_method: 'post',
    script_path: 'u/admin/trig_echo',
    is_async: true,
    authentication_method: 'none',
  });
  expect(route.status, await route.clone().text()).toBe(201);
});
afterAll(async () => {
  await s?.stop();
});

describe('the trigger of a run', () => {
  it('is recorded from the entry point, listed, and filtered by trigger=', async () => {
    const webhook = await started(await post('/jobs/run/p/u/admin/trig_echo', { x: 'w' }));
    const cli = await started(await post('/jobs/run/p/u/admin/trig_echo', { x: 'c' }, { 'x-svc-trigger': 'cli' }));
    const consoleRun = await started(await post('/jobs/run/p/u/admin/trig_echo', { x: 'o' }, { 'X-Svc-Trigger': 'console' }));
    const rerun = await started(await post('/jobs/run/p/u/admin/trig_echo', { x: 'r' }, { 'x-svc-trigger': 'rerun' }));
    const routed = await started(await s.fetch(`/api/r/${s.workspace}/trig/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x": "route"}', token: null }));
    const flow = await started(await post('/jobs/run/f/u/admin/trig_flow', {}));

    const listed = await runs('path=u/admin/trig_&per_page=50');
    const triggerOf = new Map(listed.map((r) => [r.id, r.trigger]));
    expect(Object.fromEntries([webhook, cli, consoleRun, rerun, routed, flow].map((id) => [id, triggerOf.get(id)]))).toEqual({
      [webhook]: 'webhook',
      [cli]: 'cli',
      [consoleRun]: 'console',
      [rerun]: 'rerun',
      [routed]: 'route',
      [flow]: 'webhook',
    });
    // The flow's step was started by the flow.
    expect(listed.filter((r) => r.trigger === 'flow')).toHaveLength(1);

    expect((await runs('trigger=cli')).map((r) => r.id)).toEqual([cli]);
    expect((await runs('trigger=route')).map((r) => r.id)).toEqual([routed]);
    expect((await runs('trigger=webhook&path=u/admin/trig_echo')).map((r) => r.id)).toEqual([webhook]);

    // The single job view says it too.
    const job = await (await s.fetch(`${ws()}/jobs_u/get/${cli}`)).json();
    expect(job.trigger).toBe('cli');
  });

  it('refuses a trigger a caller may not claim with a 400 that starts no job', async () => {
    const before = (await runs('path=u/admin/trig_echo&per_page=200')).length;
    for (const claimed of ['schedule', 'flow', 'route', 'nonsense']) {
      const res = await post('/jobs/run/p/u/admin/trig_echo', { x: 'bad' }, { 'x-svc-trigger': claimed });
      expect(res.status, claimed).toBe(400);
      expect((await res.json()).error.message).toMatch(/X-Svc-Trigger: must be one of cli, console, rerun/);
    }
    expect((await runs('path=u/admin/trig_echo&per_page=200')).length).toBe(before);
  });

  it('answers a 400 naming the field for an unknown trigger filter', async () => {
    const res = await s.fetch(`${ws()}/jobs/runs?trigger=telepathy`);
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toMatch(/^trigger: /);
  });
});
