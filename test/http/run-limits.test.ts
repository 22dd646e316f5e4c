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

export { job };
