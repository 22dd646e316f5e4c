import { describe, expect, it } from 'vitest';
import { BACKLOG_MEMO_MS } from '../../../functions/core/jobs/run-admission.js';
import { DEFAULT_MAX_JOBS_PER_RUN } from '../../../functions/core/jobs/run-budget.js';
import { aJob } from '../../contract/store-fixtures.js';
import { createScript, inProcessService, until, type InProcessService } from './harness.js';

/**
 * The jobs one top-level run may make in all (docs/security.md, "Runaway jobs"): a flow that fans
 * out into itself, a loop over a longer list than the limit, a script that starts itself twice per
 * run with its job token all stop at SVC_MAX_JOBS_PER_RUN jobs, the step past it failing with the
 * limit; and a flow's new step fails with `too_many_queued_jobs` when its workspace's backlog is full.
 */

const ws = '/api/w/main';
const ts = (id: string, content: string, input_transforms: Record<string, unknown> = {}) => ({
  id,
  value: { type: 'rawscript', language: 'bun', content, input_transforms },
});
const js = (expr: string) => ({ type: 'javascript', expr });

async function createFlow(s: InProcessService, path: string, modules: unknown[]): Promise<void> {
  const res = await s.post(`${ws}/flows/create`, { path, value: { modules } });
  expect(res.status, await res.clone().text()).toBe(201);
}

async function start(s: InProcessService, path: string, args: unknown = {}): Promise<string> {
  const res = await s.post(`${ws}/jobs/run/p/${path}`, args);
  expect(res.status, await res.clone().text()).toBe(201);
  return res.text();
}

const allJobs = async (s: InProcessService) => s.store.listJobs({ workspace_id: 'main', limit: 100_000 });

describe('the jobs of one run', () => {
  it('has a default of 100,000', () => {
    expect(DEFAULT_MAX_JOBS_PER_RUN).toBe(100_000);
  });

  it('stops a flow whose branches each run the flow again at the limit, with the limit in its error, and no more jobs stored', async () => {
    const LIMIT = 30;
    const s = await inProcessService({ config: { maxJobsPerRun: LIMIT } });
    const again = (id: string) => ({ id, value: { type: 'flow', path: 'u/admin/fan', input_transforms: {} } });
    await createFlow(s, 'u/admin/fan', [
      { id: 'all', value: { type: 'branchall', parallel: true, branches: [0, 1, 2].map((i) => ({ modules: [again(`again${i}`)] })) } },
    ]);
    const id = await start(s, 'u/admin/fan');
    const job = await until(
      () => s.store.getJob('main', id),
      (j) => j?.status === 'failed',
      20_000,
    );
    await s.settled();
    expect((job?.result as { error: unknown }).error).toMatchObject({ name: 'JobsPerRunLimit', code: 'jobs_per_run_limit', limit: LIMIT });
    expect((job?.result as { error: { message: string } }).error.message).toContain(`more than ${LIMIT} jobs in all`);
    const jobs = await allJobs(s);
    expect(jobs.length).toBeLessThanOrEqual(LIMIT);
    // Every job ended: the failure went up every level.
    expect(jobs.every((j) => ['failed', 'success', 'canceled'].includes(j.status))).toBe(true);
  });

  it('fails a for loop over more items than the limit before it stores any iteration, and the flow goes to its failure module', async () => {
    const s = await inProcessService({ config: { maxJobsPerRun: 10 } });
    const each = ts('each', 'export function main(x: number) { return x * 2 }', { x: js('flow_input.iter.value') });
    await createFlow(s, 'u/admin/loop', [
      { id: 'loop', value: { type: 'forloopflow', iterator: js('flow_input.items'), parallel: true, modules: [each] } },
    ]);
    const job = await s.job(await start(s, 'u/admin/loop', { items: Array.from({ length: 20 }, (_, i) => i) }));
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'JobsPerRunLimit', step_id: 'loop', limit: 10 });
    expect(job.result.error.message).toContain('its 20 jobs would not be made');
    expect(await allJobs(s)).toHaveLength(1);
    expect(await s.store.listEntities('flow_run', 'main')).toHaveLength(1);

    // A failure module runs for it as for any failed step, when there is room for its job.
    const s2 = await inProcessService({ config: { maxJobsPerRun: 10 } });
    const res = await s2.post(`${ws}/flows/create`, {
      path: 'u/admin/loop',
      value: {
        modules: [{ id: 'loop', value: { type: 'forloopflow', iterator: js('flow_input.items'), modules: [each] } }],
        failure_module: ts('failure', 'export function main(error: any) { return "handled " + error.name }', { error: js('error') }),
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const handled = await s2.job(await start(s2, 'u/admin/loop', { items: Array.from({ length: 20 }, (_, i) => i) }));
    expect(handled.status).toBe('failed');
    expect(handled.result).toBe('handled JobsPerRunLimit');
  });

  it('counts every level: a loop whose iterations each run a step fits exactly at the limit, and one more item fails the step past it', async () => {
    // The flow job, 5 iterations and 5 step jobs: 11.
    const s = await inProcessService({ config: { maxJobsPerRun: 11 } });
    const each = ts('each', 'export function main(x: number) { return x * 2 }', { x: js('flow_input.iter.value') });
    await createFlow(s, 'u/admin/loop', [
      { id: 'loop', value: { type: 'forloopflow', iterator: js('flow_input.items'), modules: [each] } },
    ]);
    const ok = await s.job(await start(s, 'u/admin/loop', { items: [1, 2, 3, 4, 5] }));
    expect(ok.status).toBe('success');
    expect(ok.result).toEqual([2, 4, 6, 8, 10]);
    expect(await allJobs(s)).toHaveLength(11);

    // 6 items: the loop's 7 jobs fit, the steps of the first 4 iterations too, and the fifth's step
    // is refused. The sixth iteration, counted as the loop started, never starts: 10 stored.
    const failed = await s.job(await start(s, 'u/admin/loop', { items: [1, 2, 3, 4, 5, 6] }));
    expect(failed.status).toBe('failed');
    expect(failed.result.error).toMatchObject({ name: 'JobsPerRunLimit', step_id: 'each' });
    expect((await allJobs(s)).length - 11).toBe(10);
  });

  it("counts a top-level flow's own steps ahead, a few writes for many steps, and still fits a run exactly at the limit", async () => {
    const steps = Array.from({ length: 40 }, (_, i) => ts(`s${i}`, `export function main() { return ${i} }`));
    for (const [limit, mostWrites] of [
      [1000, 3],
      // The flow job and its 40 steps are the limit: once no more fits ahead, each step counts exactly.
      [41, 40],
    ]) {
      const s = await inProcessService({ config: { maxJobsPerRun: limit } });
      await createFlow(s, 'u/admin/forty', steps);
      const store = s.deps.store as unknown as { countRunJobs: (...a: unknown[]) => Promise<boolean> };
      const original = store.countRunJobs;
      let writes = 0;
      store.countRunJobs = (...args) => {
        if (args[1] as number > 0) writes++;
        return original.apply(s.deps.store, args);
      };
      try {
        const job = await s.job(await start(s, 'u/admin/forty'));
        expect(job.status, JSON.stringify(job.result)).toBe('success');
        expect(await allJobs(s)).toHaveLength(41);
        // 40 steps counted 16 at a time (one step and 15 ahead) where the limit leaves room.
        expect(writes, `limit ${limit}`).toBeLessThanOrEqual(mostWrites);
      } finally {
        store.countRunJobs = original;
      }
    }
  });

  it('ends a while loop that would run on past the limit, at the iteration that would pass it', async () => {
    const s = await inProcessService({ config: { maxJobsPerRun: 9 } });
    await createFlow(s, 'u/admin/forever', [
      {
        id: 'loop',
        stop_after_if: { expr: 'false' },
        value: { type: 'whileloopflow', modules: [ts('each', 'export function main() { return 1 }')] },
      },
    ]);
    // The flow job and 4 iterations of 2 jobs each: the fifth iteration is refused.
    const job = await s.job(await start(s, 'u/admin/forever'));
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'JobsPerRunLimit', step_id: 'loop', limit: 9 });
    expect(await allJobs(s)).toHaveLength(9);
  });

  it('counts a sub-flow and its steps on the top run, not afresh', async () => {
    const s = await inProcessService({ config: { maxJobsPerRun: 4 } });
    await createFlow(s, 'u/admin/inner', [ts('a', 'export function main() { return 1 }'), ts('b', 'export function main() { return 2 }')]);
    await createFlow(s, 'u/admin/outer', [
      { id: 'sub', value: { type: 'flow', path: 'u/admin/inner', input_transforms: {} } },
      ts('c', 'export function main() { return 3 }'),
    ]);
    // outer, sub, a, b: 4; c would be the fifth.
    const job = await s.job(await start(s, 'u/admin/outer'));
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'JobsPerRunLimit', step_id: 'c' });
    expect(await allJobs(s)).toHaveLength(4);
    // The sub-flow alone, as a run of its own, has room.
    expect((await s.job(await start(s, 'u/admin/inner'))).status).toBe('success');
  });

  it('counts the runs a script starts with its job token on the run at the top: twice per run stops at the limit', async () => {
    const LIMIT = 7;
    const s = await inProcessService({ config: { maxJobsPerRun: LIMIT, maxRunDepth: 20 } });
    await createScript(
      s,
      'u/admin/twice',
      `export async function main() {
  for (let i = 0; i < 2; i++) {
    const res = await fetch(process.env.BASE_INTERNAL_URL + '/api/w/' + process.env.WM_WORKSPACE + '/jobs/run/p/u/admin/twice', {
      method: 'POST', headers: { authorization: 'Bearer ' + process.env.WM_TOKEN, 'content-type': 'application/json' }, body: '{}',
    });
    const text = await res.text();
    if (res.status !== 201) throw new Error('refused: ' + res.status + ' ' + text);
  }
  return 'done';
}`,
    );
    await start(s, 'u/admin/twice');
    await until(
      () => allJobs(s),
      (jobs) => jobs.some((j) => j.status === 'failed') && jobs.every((j) => j.status !== 'queued' && j.status !== 'running'),
      20_000,
    );
    await s.settled();
    const jobs = await allJobs(s);
    expect(jobs).toHaveLength(LIMIT);
    const refused = jobs.filter((j) => j.status === 'failed');
    expect(refused.length).toBeGreaterThan(0);
    expect((refused[0].result as { error: { message: string } }).error.message).toContain('refused: 400');
    expect((refused[0].result as { error: { message: string } }).error.message).toContain('jobs_per_run_limit');
  });
});

describe("a flow's new steps and the workspace's backlog", () => {
  it('fails a step that fans out with too_many_queued_jobs when the workspace has its limit queued, storing nothing for it; a step of one job goes on', async () => {
    const LIMIT = 3;
    const hook = globalThis as { afterFirst?: () => Promise<unknown> };
    const first = ts('first', 'export async function main() { await (globalThis as any).afterFirst?.(); return 1 }');
    const fanOut = { id: 'second', value: { type: 'branchall', branches: [{ modules: [ts('b1', 'export function main() { return 2 }')] }, { modules: [ts('b2', 'export function main() { return 3 }')] }] } };
    for (const [second, fails] of [
      [fanOut, true],
      [ts('second', 'export function main() { return 2 }'), false],
    ] as const) {
      const s = await inProcessService({ config: { maxQueuedJobsPerWorkspace: LIMIT } });
      await createFlow(s, 'u/admin/two', [first, second]);
      // The backlog fills while the flow's first step runs (stored behind this process's back, as another process would).
      hook.afterFirst = async () => {
        for (let i = 0; i < LIMIT; i++) await s.store.insertJob(aJob('main', { script_path: 'u/admin/stuck' }));
        s.clock.advance(BACKLOG_MEMO_MS);
      };
      try {
        const id = await start(s, 'u/admin/two');
        const job = await s.job(id);
        const steps = (await allJobs(s)).filter((j) => j.parent_job === id);
        if (fails) {
          expect(job.status).toBe('failed');
          expect(job.result.error).toMatchObject({ name: 'TooManyQueuedJobs', code: 'too_many_queued_jobs', step_id: 'second', limit: LIMIT });
          expect(job.result.error.message).toContain(`has ${LIMIT} jobs queued`);
          expect(steps).toHaveLength(1);
        } else {
          // It takes the place of the step that just ended: the backlog cannot grow by it.
          expect(job.status, JSON.stringify(job.result)).toBe('success');
          expect(steps).toHaveLength(2);
        }
      } finally {
        delete hook.afterFirst;
      }
    }
  });
});
