import { describe, expect, it } from 'vitest';
import { runDueTick } from '../../../functions/core/triggers/schedule-ticks.js';
import { MAX_FLOW_DEPTH } from '../../../functions/core/runs/job-lineage.js';
import { DEFAULT_MAX_RUN_DEPTH, BACKLOG_MEMO_MS } from '../../../functions/core/jobs/run-admission.js';
import { aJob } from '../../contract/store-fixtures.js';
import { renderRunPage } from '../../../functions/http/console/run-page.js';
import { createScript, inProcessService, until, type InProcessService } from './harness.js';
import type { Job } from '../../../functions/ports.js';

/**
 * Runaway jobs (docs/security.md, "Runaway jobs"): a script that runs itself through the API with
 * its job token stops at the depth limit, each run recording the job that started it; and a
 * workspace with its limit of queued jobs is refused new runs, whoever starts them.
 */

const ws = '/api/w/main';

/** A script that starts `path` `times` times through the API with its own job token, and fails with the answer when refused. */
const selfStarter = (path: string, times: number) => `export async function main() {
  await (globalThis as any).beforeStarting?.();
  for (let i = 0; i < ${times}; i++) {
    const res = await fetch(process.env.BASE_INTERNAL_URL + '/api/w/' + process.env.WM_WORKSPACE + '/jobs/run/p/${path}', {
      method: 'POST', headers: { authorization: 'Bearer ' + process.env.WM_TOKEN, 'content-type': 'application/json' }, body: '{}',
    });
    const text = await res.text();
    if (res.status !== 201) throw new Error('refused: ' + res.status + ' ' + text);
    console.log('started ' + text);
  }
  return 'done';
}`;

const jobsOf = async (s: InProcessService, path: string): Promise<Job[]> => (await s.store.listJobs({ workspace_id: 'main', script_path: path, limit: 10_000 })).reverse();

async function start(s: InProcessService, path: string): Promise<string> {
  const res = await s.post(`${ws}/jobs/run/p/${path}`, {});
  expect(res.status, await res.clone().text()).toBe(201);
  return res.text();
}

describe('a script that runs itself through the API with its job token', () => {
  it('stops at the depth limit: each run names the job that started it, and the deepest fails with the refusal', async () => {
    const s = await inProcessService({ config: { maxRunDepth: 3 } });
    await createScript(s, 'u/admin/again', selfStarter('u/admin/again', 1));
    const top = await start(s, 'u/admin/again');
    await s.settled();
    const runs = await jobsOf(s, 'u/admin/again');
    // The top run and one per level below it, down to the limit: nothing beyond.
    expect(runs).toHaveLength(4);
    expect(runs[0]).toMatchObject({ id: top, status: 'success' });
    expect(runs[0].started_by_job ?? null).toBeNull();
    for (let depth = 1; depth <= 3; depth++) expect(runs[depth]).toMatchObject({ started_by_job: runs[depth - 1].id, run_depth: depth, parent_job: null });
    expect(runs.slice(0, 3).every((j) => j.status === 'success')).toBe(true);
    const deepest = await s.job(runs[3].id);
    expect(deepest.status).toBe('failed');
    expect(deepest.result.error.message).toContain('refused: 400');
    expect(deepest.result.error.message).toContain('run_depth_limit');
    expect(deepest.result.error.message).toContain('beyond the limit of 3');
    // The API shows the lineage too.
    expect(deepest).toMatchObject({ started_by_job: runs[2].id, run_depth: 3, parent_job: null });
    // And the console's run page links the run that started it.
    const page = renderRunPage({ workspace: 'main', username: 'admin', job: runs[3], canCancel: false, canRerun: true, modules: null });
    expect(page).toContain(`started by <a id="started-by" href="/w/main/run/${runs[2].id}">`);
  });

  it('stops a run that starts itself twice too: the tree is as deep as the limit, not more', async () => {
    const s = await inProcessService({ config: { maxRunDepth: 3 } });
    await createScript(s, 'u/admin/twice', selfStarter('u/admin/twice', 2));
    await start(s, 'u/admin/twice');
    await s.settled();
    const runs = await jobsOf(s, 'u/admin/twice');
    // 1 + 2 + 4 + 8: the 8 at depth 3 each fail at their first start.
    expect(runs).toHaveLength(15);
    expect(runs.filter((j) => j.status === 'failed').map((j) => j.run_depth)).toEqual(Array(8).fill(3));
    expect(Math.max(...runs.map((j) => j.run_depth ?? 0))).toBe(3);
  });

  it('counts the flows above a step, and the runs above them, with the same default limit as sub-flows', async () => {
    expect(DEFAULT_MAX_RUN_DEPTH).toBe(MAX_FLOW_DEPTH);
    const s = await inProcessService({ config: { maxRunDepth: 4 } });
    const step = { id: 'again', value: { type: 'rawscript', language: 'bun', content: selfStarter('u/admin/looping', 1).replace('/jobs/run/p/', '/jobs/run/f/'), input_transforms: {} } };
    const res = await s.post(`${ws}/flows/create`, { path: 'u/admin/looping', value: { modules: [step] } });
    expect(res.status, await res.clone().text()).toBe(201);
    expect((await s.post(`${ws}/jobs/run/f/u/admin/looping`, {})).status).toBe(201);
    await s.settled();
    const flows = (await jobsOf(s, 'u/admin/looping')).filter((j) => j.kind === 'flow');
    // The flow (0), its step (1), the flow that step started (2), its step (3), the next flow (4);
    // that flow's step (5) is refused another.
    expect(flows.map((j) => j.run_depth ?? 0)).toEqual([0, 2, 4]);
    // The upper flows' steps started the next one and succeeded; the deepest's step was refused.
    expect(flows.map((j) => j.status)).toEqual(['success', 'success', 'failed']);
    const last = await s.job(flows[2].id);
    expect(JSON.stringify(last.result)).toContain('beyond the limit of 4');
  });

  it('is 32 levels deep by default', async () => {
    const s = await inProcessService();
    await createScript(s, 'u/admin/deep', selfStarter('u/admin/deep', 1));
    await start(s, 'u/admin/deep');
    await s.settled();
    const runs = await jobsOf(s, 'u/admin/deep');
    expect(runs).toHaveLength(MAX_FLOW_DEPTH + 1);
    expect(runs.at(-1)).toMatchObject({ status: 'failed', run_depth: MAX_FLOW_DEPTH });
  });
});

describe("a workspace's queued jobs", () => {
  const LIMIT = 3;

  /** Jobs stored queued that no worker will take: the backlog a runaway leaves. */
  async function backlog(s: InProcessService, count: number): Promise<Job[]> {
    const jobs = Array.from({ length: count }, () => aJob('main', { script_path: 'u/admin/stuck' }));
    for (const j of jobs) await s.store.insertJob(j);
    return jobs;
  }

  it('refuses new runs with 429 once the workspace has its limit queued, whoever starts them, and accepts them again once one leaves the queue', async () => {
    const s = await inProcessService({ config: { maxQueuedJobsPerWorkspace: LIMIT } });
    await createScript(s, 'u/admin/hello', 'export function main() { return "hi" }');
    await createScript(s, 'u/admin/starter', selfStarter('u/admin/hello', 1));
    const flow = await s.post(`${ws}/flows/create`, { path: 'u/admin/f', value: { modules: [] } });
    expect(flow.status).toBe(201);
    // A job that starts another while the workspace is still below its limit.
    const before = await s.job(await start(s, 'u/admin/starter'));
    expect(before.status).toBe('success');

    const stuck = await backlog(s, LIMIT);
    // Stored behind this process's back (as another process would): it knows once its last count runs out.
    s.clock.advance(BACKLOG_MEMO_MS);
    const jobsBefore = (await s.store.listJobs({ workspace_id: 'main', limit: 10_000 })).length;
    for (const path of [`${ws}/jobs/run/p/u/admin/hello`, `${ws}/jobs/run_wait_result/p/u/admin/hello`, `${ws}/jobs/run/f/u/admin/f`, `${ws}/jobs/run_wait_result/f/u/admin/f`]) {
      const res = await s.post(path, {});
      expect(res.status, path).toBe(429);
      const body = await res.json();
      expect(body.error).toMatchObject({ code: 'too_many_queued_jobs' });
      expect(body.error.message).toContain(`has ${LIMIT} jobs queued`);
      expect(res.headers.get('retry-after')).toBe('1');
    }
    // Nothing was stored for the refused runs.
    expect((await s.store.listJobs({ workspace_id: 'main', limit: 10_000 })).length).toBe(jobsBefore);
    // Another workspace runs as before.
    expect((await s.post('/api/workspaces/create', { id: 'other', name: 'Other' })).status).toBeLessThan(300);
    const other = await s.post('/api/w/other/scripts/create', { path: 'u/admin/hello', language: 'bun', content: 'export function main() { return "there" }' });
    expect(other.status, await other.clone().text()).toBe(201);
    const there = await s.post('/api/w/other/jobs/run_wait_result/p/u/admin/hello', {});
    expect(there.status, await there.clone().text()).toBe(200);
    expect(await there.json()).toBe('there');

    // One leaves the queue: runs are accepted again, once the refusal this process remembers ran out.
    await s.store.completeJob(stuck[0].id, { status: 'canceled', result: null, logs: '' }, s.clock.now().toISOString());
    expect((await s.post(`${ws}/jobs/run/p/u/admin/hello`, {})).status).toBe(429);
    s.clock.advance(BACKLOG_MEMO_MS);
    const res = await s.post(`${ws}/jobs/run_wait_result/p/u/admin/hello`, {});
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toBe('hi');
  });

  it('counts the backlog once for a run of admissions far below the limit, and still stops at the limit', async () => {
    const s = await inProcessService({ config: { maxQueuedJobsPerWorkspace: 40 } });
    await createScript(s, 'u/admin/hello', 'export function main() { return "hi" }');
    const count = s.store.countQueuedJobs.bind(s.store);
    let counts = 0;
    s.store.countQueuedJobs = (workspaceId: string, atMost: number) => {
      counts++;
      return count(workspaceId, atMost);
    };
    // Runs nothing takes: each new run stays queued, as a runaway's do.
    const held = await backlog(s, 0);
    expect(held).toHaveLength(0);
    const statuses: number[] = [];
    for (let i = 0; i < 45; i++) {
      const res = await s.post(`${ws}/jobs/run/p/u/admin/hello`, {});
      statuses.push(res.status);
      if (res.status === 201) await s.store.insertJob(aJob('main', { script_path: 'u/admin/stuck' })); // one more queued, as if this run had not started yet
    }
    // Each count's room is halved before the next: 40 places take about log2(40) counts, not 40.
    expect(counts).toBeLessThanOrEqual(8);
    const admitted = statuses.filter((status) => status === 201).length;
    expect(admitted).toBeLessThanOrEqual(40);
    expect(statuses.slice(admitted).every((status) => status === 429)).toBe(true);
  });

  it('refuses a job starting a run with its token, the refusal in its result', async () => {
    const s = await inProcessService({ config: { maxQueuedJobsPerWorkspace: LIMIT } });
    await createScript(s, 'u/admin/hello', 'export function main() { return "hi" }');
    await createScript(s, 'u/admin/starter', selfStarter('u/admin/hello', 1));
    // The backlog fills while the starter runs, before it starts its run.
    const hook = globalThis as { beforeStarting?: () => Promise<unknown> };
    hook.beforeStarting = async () => {
      await backlog(s, LIMIT);
      s.clock.advance(BACKLOG_MEMO_MS);
    };
    try {
      const job = await s.job(await start(s, 'u/admin/starter'));
      expect(job.status).toBe('failed');
      expect(job.result.error.message).toContain('refused: 429');
      expect(job.result.error.message).toContain('too_many_queued_jobs');
      expect(await jobsOf(s, 'u/admin/hello')).toHaveLength(0);
    } finally {
      delete hook.beforeStarting;
    }
  });

  it('skips a schedule tick when the workspace has its limit queued, and records it as the schedule run that failed to start', async () => {
    const s = await inProcessService({ config: { maxQueuedJobsPerWorkspace: LIMIT } });
    await createScript(s, 'u/admin/hello', 'export function main() { return "hi" }');
    s.clock.advance(1000 - (s.clock.now().getTime() % 1000));
    const created = await s.post(`${ws}/schedules/create`, { path: 'u/admin/every5s', script_path: 'u/admin/hello', schedule: '*/5 * * * * *' });
    expect(created.status, await created.clone().text()).toBe(201);
    await backlog(s, LIMIT);
    s.clock.advance(5000);
    const outcome = await runDueTick(s.deps, 'main', 'u/admin/every5s', s.clock.now());
    await s.settled();
    // The tick is spent (not run later in a burst) and counted as a failure saying why.
    expect(outcome).toMatchObject({ ran: true, jobId: null });
    expect(await jobsOf(s, 'u/admin/hello')).toHaveLength(0);
    const schedule = await until(
      async () => (await (await s.fetch(`${ws}/schedules/get/u/admin/every5s`)).json()) as { failure_streak: number; last_failure: { error: { name: string; message: string } } | null },
      (sc) => sc.failure_streak === 1,
    );
    expect(schedule.last_failure?.error).toMatchObject({ name: 'ScheduleStartError' });
    expect(schedule.last_failure?.error.message).toContain(`has ${LIMIT} jobs queued`);
  });
});
