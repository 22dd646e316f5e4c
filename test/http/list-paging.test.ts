import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * The workspace's list routes page as Windmill's do (`page` from 1, `per_page`), and refuse a
 * parameter they do not have, or a value they cannot read, with a 400 naming it: a Windmill client
 * asking for 10 items, or for a filter svc lacks, was answered with everything as if it had not asked.
 */
let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const VARIABLES = ['f/paging/v1', 'f/paging/v2', 'f/paging/v3', 'f/paging/v4', 'f/paging/v5'];

beforeAll(async () => {
  s = await startServer();
  for (const path of VARIABLES) expect((await s.post(`${ws()}/variables/create`, { path, value: 'x', is_secret: false, description: '' })).status).toBe(201);
  await createScript(s, 'f/paging/job', 'bun', 'export function main() { return 1; }');
  for (let i = 0; i < 3; i++) await s.fetch(`${ws()}/jobs/run_wait_result/p/f/paging/job`, { method: 'POST' });
});
afterAll(() => s?.stop());

const get = async (path: string) => {
  const res = await s.fetch(`${ws()}/${path}`);
  return { status: res.status, body: await res.json() };
};

describe('list routes', () => {
  it('give page N of per_page items, and everything when neither is asked for', async () => {
    const all = (await get('variables/list')).body.map((v: { path: string }) => v.path);
    expect(all).toEqual(expect.arrayContaining(VARIABLES));
    const page = async (n: number) => (await get(`variables/list?page=${n}&per_page=2`)).body.map((v: { path: string }) => v.path);
    expect([...(await page(1)), ...(await page(2)), ...(await page(3))]).toEqual(all.slice(0, 6));
    expect(await page(1)).toEqual(all.slice(0, 2));
    expect(await page(2)).toEqual(all.slice(2, 4));
    expect((await get(`variables/list?page=100&per_page=2`)).body).toEqual([]);
    expect((await get('variables/list?per_page=1')).body).toHaveLength(1);
  });

  it('page the job list too: page 2 is the next jobs, not page 1 again', async () => {
    const first = (await get('jobs/list?script_path_exact=f/paging/job&per_page=2')).body.map((j: { id: string }) => j.id);
    const second = (await get('jobs/list?script_path_exact=f/paging/job&per_page=2&page=2')).body.map((j: { id: string }) => j.id);
    expect(first).toHaveLength(2);
    expect(second).toHaveLength(1);
    expect(first).not.toContain(second[0]);
  });

  it.each([
    ['variables/list?page=abc', 'page'],
    ['variables/list?per_page=0', 'per_page'],
    ['variables/list?path_start=f/', 'path_start'],
    ['scripts/list?created_by=admin', 'created_by'],
    ['flows/list?show_archived=1', 'show_archived'],
    ['jobs/list?created_by=admin', 'created_by'],
    ['jobs/list?page=0', 'page'],
    ['variables/get/f/paging/v1?encrypted=1', 'encrypted'],
  ])('refuse %s with a 400 naming %s', async (path, name) => {
    const res = await get(path);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error)).toContain(name);
  });

  it('take the token in the query as the credential it is, on a strict list too', async () => {
    const res = await s.fetch(`${ws()}/jobs/queue/list?token=${s.token}`, { token: null });
    expect(res.status).toBe(200);
    expect((await s.fetch(`${ws()}/variables/list?per_page=1&token=${s.token}`, { token: null })).status).toBe(200);
  });
});
