import { describe, expect, it } from 'vitest';
import { failUndeliverable, reapStuckJobs, STUCK_JOB_ERRORS } from '../../../functions/core/runs/stuck-jobs.js';
import { aJob } from '../../contract/store-fixtures.js';
import { createScript, inProcessService } from './harness.js';

/**
 * A run a schedule started that no worker ever finishes (the AWS reaper's and dead-letter
 * consumer's cases) is failed like any other failed scheduled run: the schedule's `on_failure`
 * runs, once, with the reason.
 */

async function setUp() {
  const s = await inProcessService();
  await createScript(s, 'u/admin/work', 'export function main() { return 1 }');
  await createScript(s, 'u/admin/alert', 'export function main(schedule_path: string, job_id: string, error: unknown) { return { schedule_path, job_id, error } }');
  const res = await s.post('/api/w/main/schedules/create', { path: 'u/admin/nightly', schedule: '0 0 3 * * *', script_path: 'u/admin/work', on_failure: 'u/admin/alert', enabled: false });
  expect(res.status, await res.clone().text()).toBe(201);
  const alerts = async () => (await s.deps.store.listJobs({ workspace_id: 'main', limit: 100 })).filter((j) => j.script_path === 'u/admin/alert');
  return { s, alerts };
}

const hoursAgo = (now: Date, h: number) => new Date(now.getTime() - h * 3600_000).toISOString();

describe("stuck runs of a schedule reach its on_failure", () => {
  it('a run the reaper fails as never started', async () => {
    const { s, alerts } = await setUp();
    const stuck = aJob('main', { script_path: 'u/admin/work', schedule_path: 'u/admin/nightly', created_at: hoursAgo(s.clock.now(), 7) });
    await s.deps.store.insertJob(stuck);
    const reaped = await reapStuckJobs(s.deps, { queuedMs: 6 * 3600_000, runningMs: 3600_000, batch: 10 });
    expect(reaped.neverStarted).toEqual([stuck.id]);
    await s.settled();
    const [alert, ...more] = await alerts();
    expect(more).toEqual([]);
    expect((await s.job(alert.id)).result).toMatchObject({ schedule_path: 'u/admin/nightly', job_id: stuck.id, error: { name: STUCK_JOB_ERRORS.neverStarted } });
    // A second pass finds nothing and starts nothing more.
    await reapStuckJobs(s.deps, { queuedMs: 6 * 3600_000, runningMs: 3600_000, batch: 10 });
    expect(await alerts()).toHaveLength(1);
  });

  it('a run the queue gave up on', async () => {
    const { s, alerts } = await setUp();
    const stuck = aJob('main', { script_path: 'u/admin/work', schedule_path: 'u/admin/nightly', created_at: hoursAgo(s.clock.now(), 1) });
    await s.deps.store.insertJob(stuck);
    expect(await failUndeliverable(s.deps, 'main', stuck.id, 3)).toBe(true);
    await s.settled();
    const [alert] = await alerts();
    expect((await s.job(alert.id)).result).toMatchObject({ job_id: stuck.id, error: { name: STUCK_JOB_ERRORS.undeliverable } });
  });
});
