import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, waitForJob, type TestServer } from './harness.js';

/**
 * The jobs one top-level run may make in all (docs/security.md, "Runaway jobs"), over real HTTP in
 * both shells: a flow whose branches each run the flow again, and a for loop over more items than
 * the limit, fail at SVC_MAX_JOBS_PER_RUN with the limit's error, and no more jobs are stored.
 */

const LIMIT = 12;
let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SVC_MAX_JOBS_PER_RUN: String(LIMIT) } });
});
afterAll(() => s?.stop());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON view, read as a client reads it
type Json = Record<string, any>;
const ws = () => `/api/w/${s.workspace}`;
const js = (expr: string) => ({ type: 'javascript', expr });

async function createFlow(path: string, modules: unknown[]): Promise<void> {
  const res = await s.post(`${ws()}/flows/create`, { path, value: { modules } });
  expect(res.status, await res.clone().text()).toBe(201);
}

async function run(path: string, args: unknown = {}): Promise<Json> {
  const res = await s.post(`${ws()}/jobs/run/p/${path}`, args);
  expect(res.status, await res.clone().text()).toBe(201);
  return waitForJob(s, await res.text(), 120_000);
}

/** The stored jobs whose path is `path` or below it (a flow's branches and iterations are `<path>/<module>`). */
async function jobsUnder(path: string): Promise<Json[]> {
  const all: Json[] = await (await s.fetch(`${ws()}/jobs/list?per_page=1000`)).json();
  return all.filter((j) => j.script_path === path || j.script_path.startsWith(`${path}/`));
}

describe('the jobs of one run', () => {
  it('stops a flow whose branches each run the flow again at the limit, with no more jobs stored', async () => {
    const again = (id: string) => ({ id, value: { type: 'flow', path: 'u/admin/fan', input_transforms: {} } });
    await createFlow('u/admin/fan', [
      { id: 'all', value: { type: 'branchall', parallel: true, branches: [0, 1, 2].map((i) => ({ modules: [again(`again${i}`)] })) } },
    ]);
    const job = await run('u/admin/fan');
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'JobsPerRunLimit', code: 'jobs_per_run_limit', limit: LIMIT });
    expect(job.result.error.message).toContain(`more than ${LIMIT} jobs in all`);
    const jobs = await jobsUnder('u/admin/fan');
    expect(jobs.length).toBeLessThanOrEqual(LIMIT);
    expect(jobs.every((j) => ['failed', 'success', 'canceled'].includes(j.status))).toBe(true);
  });

  it('fails a for loop over more items than the limit before it stores any iteration', async () => {
    const each = {
      id: 'each',
      value: {
        type: 'rawscript',
        language: 'bun',
        content: 'export function main(x: number) { return x + 1 }',
        input_transforms: { x: js('flow_input.iter.value') },
      },
    };
    await createFlow('u/admin/loop', [
      { id: 'loop', value: { type: 'forloopflow', iterator: js('flow_input.items'), parallel: true, modules: [each] } },
    ]);
    // The flow job, 5 iterations and their 5 steps fit.
    expect(await run('u/admin/loop', { items: [1, 2, 3, 4, 5] })).toMatchObject({ status: 'success', result: [2, 3, 4, 5, 6] });
    const before = (await jobsUnder('u/admin/loop')).length;
    const job = await run('u/admin/loop', { items: Array.from({ length: LIMIT + 5 }, (_, i) => i) });
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'JobsPerRunLimit', step_id: 'loop', limit: LIMIT });
    expect(job.flow_status.module_jobs?.loop ?? []).toHaveLength(0);
    // The flow job alone.
    expect((await jobsUnder('u/admin/loop')).length).toBe(before + 1);
  });
});
