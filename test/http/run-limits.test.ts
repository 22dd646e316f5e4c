import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Result cache, concurrency limits and priority of scripts and flows (issue 32 items 7 and 8,
 * docs/flows.md), over real HTTP in both shells, with the modelled service's field names.
 */

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.stop());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON view, read as a client reads it
type Json = Record<string, any>;
const ws = () => `/api/w/${s.workspace}`;
const job = async (id: string): Promise<Json> => (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();

async function createScript(path: string, content: string, extra: Record<string, unknown> = {}): Promise<Json> {
  const res = await s.post(`${ws()}/scripts/create`, { path, language: 'bun', content, ...extra });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await s.fetch(`${ws()}/scripts/get/h/${await res.text()}`)).json();
}

async function start(path: string, args: unknown = {}): Promise<string> {
  const res = await s.post(`${ws()}/jobs/run/p/${path}`, args);
  expect(res.status, await res.clone().text()).toBe(201);
  return res.text();
}

const RANDOM = 'export function main(n: number, s: string) { return { n, s, run: crypto.randomUUID() } }';

describe('cache_ttl', () => {
  it('answers an identical run of a script within the TTL with the stored result, runs nothing, and marks the job a cache hit', async () => {
    const created = await createScript('u/admin/cached', RANDOM, { cache_ttl: 300 });
    expect(created.cache_ttl).toBe(300);

    const first = await waitForJob(s, await start('u/admin/cached', { n: 1, s: 'a' }));
    expect(first).toMatchObject({ status: 'success', cache_hit: false });

    // The same arguments in another order: the same run.
    const again = await waitForJob(s, await start('u/admin/cached', { s: 'a', n: 1 }));
    expect(again).toMatchObject({ status: 'success', cache_hit: true, result: first.result, started_at: null });
    expect(again.logs).toContain(`cache hit: the result of job ${first.id}`);

    // The sync webhook answers with the stored result too.
    const sync = await s.post(`${ws()}/jobs/run_wait_result/p/u/admin/cached`, { n: 1, s: 'a' });
    expect(sync.status).toBe(200);
    expect(await sync.json()).toEqual(first.result);

    // Other arguments are another run.
    const other = await waitForJob(s, await start('u/admin/cached', { n: 2, s: 'a' }));
    expect(other.cache_hit).toBe(false);
    expect(other.result.run).not.toBe(first.result.run);
  });

  it("never answers one member's run with a result another member's run computed with their rights", async () => {
    // dora may run what is in f/shared.
    expect((await s.post(`${ws()}/folders/create`, { name: 'shared', extra_perms: { 'u/dora': false } })).status).toBeLessThan(300);
    await createScript('f/shared/cached_lookup', RANDOM, { cache_ttl: 300 });
    const json = (body: unknown) => ({ method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    await s.post('/api/users/create', { username: 'dora', email: 'dora@example.com', password: 'dora-password' });
    await s.post(`${ws()}/workspaces/add_user`, { username: 'dora', role: 'developer' });
    const login = await s.fetch('/api/auth/login', { ...json({ email: 'dora@example.com', password: 'dora-password' }), token: null });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const dora = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'tests' }), token: null, headers: { cookie, 'content-type': 'application/json' } })).text();

    const admins = await waitForJob(s, await start('f/shared/cached_lookup', { n: 5, s: 'same' }));
    const res = await s.fetch(`${ws()}/jobs/run/p/f/shared/cached_lookup`, { ...json({ n: 5, s: 'same' }), token: dora });
    expect(res.status, await res.clone().text()).toBe(201);
    const doras = await waitForJob(s, await res.text());
    expect(doras).toMatchObject({ status: 'success', cache_hit: false, created_by: 'dora' });
    expect(doras.result.run).not.toBe(admins.result.run);
    // Her own second run is hers to reuse.
    const again = await s.fetch(`${ws()}/jobs/run/p/f/shared/cached_lookup`, { ...json({ s: 'same', n: 5 }), token: dora });
    expect(await waitForJob(s, await again.text())).toMatchObject({ cache_hit: true, result: doras.result });
  });

  it('does not share results between versions of a script, nor cache a failed run', async () => {
    const v1 = await createScript('u/admin/cached_versions', RANDOM, { cache_ttl: 300 });
    const first = await waitForJob(s, await start('u/admin/cached_versions', { n: 1, s: 'x' }));
    await createScript('u/admin/cached_versions', RANDOM, { cache_ttl: 300, parent_hash: v1.hash });
    const newVersion = await waitForJob(s, await start('u/admin/cached_versions', { n: 1, s: 'x' }));
    expect(newVersion.cache_hit).toBe(false);
    expect(newVersion.result.run).not.toBe(first.result.run);

    await createScript('u/admin/cached_failure', 'export function main() { throw new Error("no") }', { cache_ttl: 300 });
    const failed = await waitForJob(s, await start('u/admin/cached_failure'));
    const failedAgain = await waitForJob(s, await start('u/admin/cached_failure'));
    expect([failed.status, failedAgain.status, failedAgain.cache_hit]).toEqual(['failed', 'failed', false]);
  });

  it('caches a flow run by its version and input', async () => {
    const res = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/cached_flow',
      value: {
        cache_ttl: 120,
        modules: [{ id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main(x: number) { return { x, run: crypto.randomUUID() } }', input_transforms: { x: { type: 'javascript', expr: 'flow_input.x' } } } }],
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const first = await waitForJob(s, await start('u/admin/cached_flow', { x: 1 }), 60_000);
    expect(first).toMatchObject({ status: 'success', cache_hit: false });
    const again = await waitForJob(s, await start('u/admin/cached_flow', { x: 1 }));
    expect(again).toMatchObject({ status: 'success', cache_hit: true, result: first.result });
    const sync = await s.post(`${ws()}/jobs/run_wait_result/p/u/admin/cached_flow`, { x: 1 });
    expect(await sync.json()).toEqual(first.result);
    expect((await (await s.fetch(`${ws()}/flows/get/u/admin/cached_flow`)).json()).value.cache_ttl).toBe(120);
  });
});

/** The job records when it started and ended, by its own clock, so overlaps are measured by the runs themselves. It lasts `ms`. */
const TIMED = 'export async function main(i: number, ms = 400) { const start = Date.now(); await new Promise((r) => setTimeout(r, ms)); return { i, start, end: Date.now() } }';

/** The most runs that were running at one moment, from their own start and end times. */
function maxOverlap(runs: { start: number; end: number }[]): number {
  const edges = runs.flatMap((r) => [{ at: r.start, d: 1 }, { at: r.end, d: -1 }]).sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let max = 0;
  for (const e of edges) max = Math.max(max, (now += e.d));
  return max;
}

describe('concurrent_limit', () => {
  it('runs 10 runs of a script with concurrent_limit 2 never more than 2 at once, all of them, in order', async () => {
    await createScript('u/admin/limited', TIMED, { concurrent_limit: 2 });
    // The first two last long enough for the third to be seen waiting, however slow the machine's starts.
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await start('u/admin/limited', i < 2 ? { i, ms: 2000 } : { i }));
    // Queued behind the first two, never failed or dropped.
    const waiting = await job(ids[2]);
    expect(waiting.status).toBe('queued');
    for (let i = 3; i < 10; i++) ids.push(await start('u/admin/limited', { i }));
    const jobs = await Promise.all(ids.map((id) => waitForJob(s, id, 90_000)));
    expect(jobs.map((j) => j.status)).toEqual(Array(10).fill('success'));
    const runs = jobs.map((j) => j.result as { i: number; start: number; end: number });
    expect(runs.map((r) => r.i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(maxOverlap(runs)).toBeLessThanOrEqual(2);
    // In order: slots go to waiting runs oldest first, so every run submitted two or more places
    // earlier had started before this one did (two admitted together may start either way round).
    for (let i = 2; i < runs.length; i++) {
      for (let j = 0; j <= i - 2; j++) expect(runs[j].start, `run ${j} before run ${i}`).toBeLessThanOrEqual(runs[i].start);
    }
    expect(jobs[0].concurrency_key).toBe('script/u/admin/limited');
  });

  it('limits a flow the same way: its runs wait their turn, one at a time', async () => {
    const res = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/limited_flow',
      value: {
        concurrent_limit: 1,
        modules: [{ id: 'a', value: { type: 'rawscript', language: 'bun', content: TIMED, input_transforms: { i: { type: 'javascript', expr: 'flow_input.i' } } } }],
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await start('u/admin/limited_flow', { i }));
    const jobs = await Promise.all(ids.map((id) => waitForJob(s, id, 90_000)));
    expect(jobs.map((j) => j.status)).toEqual(['success', 'success', 'success']);
    const runs = jobs.map((j) => j.result as { i: number; start: number; end: number });
    expect(runs.map((r) => r.i)).toEqual([0, 1, 2]);
    expect(maxOverlap(runs)).toBe(1);
    expect(runs[0].end).toBeLessThanOrEqual(runs[1].start);
    expect(runs[1].end).toBeLessThanOrEqual(runs[2].start);
  });

  it('counts runs per custom concurrency key: runs of different keys do not wait for each other', async () => {
    await createScript('u/admin/limited_by_key', 'export async function main(tenant: string, i: number) { const start = Date.now(); await new Promise((r) => setTimeout(r, 400)); return { tenant, i, start, end: Date.now() } }', {
      concurrent_limit: 1,
      concurrency_key: '$workspace/tenant-$args[tenant]',
    });
    const ids: string[] = [];
    for (const [tenant, i] of [['a', 0], ['b', 0], ['a', 1], ['b', 1]] as const) ids.push(await start('u/admin/limited_by_key', { tenant, i }));
    const jobs = await Promise.all(ids.map((id) => waitForJob(s, id, 60_000)));
    expect(jobs.map((j) => j.status)).toEqual(Array(4).fill('success'));
    expect(jobs[0].concurrency_key).toBe(`${s.workspace}/tenant-a`);
    const runs = jobs.map((j) => j.result as { tenant: string; start: number; end: number });
    for (const tenant of ['a', 'b']) expect(maxOverlap(runs.filter((r) => r.tenant === tenant))).toBe(1);
  });

  // On AWS a slot freed by a window's end is seen by the reaper's pass, minutes later (docs/flows.md).
  it.skipIf(process.env.SVC_TEST_SHELL === 'aws')('with concurrency_time_window_s, a run keeps its slot until that long after it started, even once it ended', async () => {
    await createScript('u/admin/windowed', 'export function main(i: number) { return i }', { concurrent_limit: 1, concurrency_time_window_s: 2 });
    const first = await start('u/admin/windowed', { i: 1 });
    const second = await start('u/admin/windowed', { i: 2 });
    const [a, b] = await Promise.all([waitForJob(s, first), waitForJob(s, second, 30_000)]);
    expect([a.result, b.result]).toEqual([1, 2]);
    // The first run took its slot after it was created; the second got it 2 s after that at the earliest.
    expect(Date.parse(b.started_at) - Date.parse(a.created_at)).toBeGreaterThanOrEqual(2_000);
  });

  it('a canceled waiting run gives up its place; the others still run', async () => {
    await createScript('u/admin/limited_cancel', TIMED, { concurrent_limit: 1 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await start('u/admin/limited_cancel', { i }));
    expect((await s.post(`${ws()}/jobs_u/queue/cancel/${ids[1]}`, { reason: 'not needed' })).status).toBe(200);
    const jobs = await Promise.all(ids.map((id) => waitForJob(s, id, 60_000)));
    expect(jobs.map((j) => j.status)).toEqual(['success', 'canceled', 'success']);
  });
});

describe('priority', () => {
  const aws = process.env.SVC_TEST_SHELL === 'aws';

  it('is kept on the script and on each of its jobs', async () => {
    const script = await createScript('u/admin/urgent_kept', 'export function main() { return 1 }', { priority: 40 });
    expect(script.priority).toBe(40);
    expect((await waitForJob(s, await start('u/admin/urgent_kept'))).priority).toBe(40);
  });

  // SQS has no priorities: on AWS the jobs queue takes jobs in arrival order (docs/flows.md).
  it.skipIf(aws)('runs higher-priority jobs first when every worker is busy', async () => {
    const one = await startServer({ env: { SVC_WORKERS: '1' } });
    try {
      const api = `/api/w/${one.workspace}`;
      const make = async (path: string, extra: Record<string, unknown>) => expect((await one.post(`${api}/scripts/create`, { path, language: 'bun', content: TIMED, ...extra })).status).toBe(201);
      await make('u/admin/blocker', {});
      await make('u/admin/routine', {});
      await make('u/admin/urgent', { priority: 50 });
      const run = async (path: string, i: number) => (await one.post(`${api}/jobs/run/p/${path}`, { i })).text();
      const blocker = await run('u/admin/blocker', 0);
      // The only worker is taken before the others arrive.
      while ((await (await one.fetch(`${api}/jobs_u/get/${blocker}`)).json()).status === 'queued') await new Promise((r) => setTimeout(r, 20));
      const ids = [await run('u/admin/routine', 1), await run('u/admin/routine', 2), await run('u/admin/urgent', 3)];
      const jobs = await Promise.all(ids.map((id) => waitForJob(one, id, 60_000)));
      const order = jobs.map((j) => j.result as { i: number; start: number }).sort((a, b) => a.start - b.start).map((r) => r.i);
      expect(order).toEqual([3, 1, 2]);
    } finally {
      await one.stop();
    }
  });
});

describe('bad values', () => {
  it.each([
    ['cache_ttl', -5],
    ['cache_ttl', 1.5],
    ['cache_ttl', 'soon'],
    ['concurrent_limit', 0],
    ['concurrent_limit', 2.5],
    ['concurrency_time_window_s', -1],
    ['priority', 'high'],
    ['priority', 101],
  ])('refuses %s: %j on a script with a 400 naming the field, and stores nothing', async (field, value) => {
    const path = `u/admin/bad_${field}`;
    const res = await s.post(`${ws()}/scripts/create`, { path, language: 'bun', content: 'export function main() {}', [field]: value });
    expect(res.status).toBe(400);
    expect((await res.json()).error.field).toBe(field);
    expect((await s.fetch(`${ws()}/scripts/get/p/${path}`)).status).toBe(404);
  });

  it('refuses a bad value on a flow naming value.<field>', async () => {
    const res = await s.post(`${ws()}/flows/create`, { path: 'u/admin/bad_flow_limit', value: { modules: [], concurrent_limit: -1 } });
    expect(res.status).toBe(400);
    expect((await res.json()).error.field).toBe('value.concurrent_limit');
  });
});

