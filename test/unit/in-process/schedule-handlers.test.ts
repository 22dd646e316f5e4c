import { describe, expect, it } from 'vitest';
import { runDueTick, type TickOutcome } from '../../../functions/core/triggers/schedule-ticks.js';
import { OUTCOME_GRACE_MS, handlerJobId, onScheduledJobFailed, settleScheduleOutcomes } from '../../../functions/core/triggers/schedule-handlers.js';
import type { Entity, Job } from '../../../functions/ports.js';
import { createScript, inProcessService, interruptWrites, type InProcessService } from './harness.js';

/**
 * A schedule's on_failure after N failures in a row and its on_recovery (the modelled service's
 * shapes), on a clock the test moves. The script fails while its argument says so.
 */
describe('schedule failure and recovery handlers', () => {
  it('runs on_failure once the runs failed N times in a row, and on_recovery when one succeeds after them', async () => {
    const s = await inProcessService();
    await createScript(s, 'u/admin/flaky_job', 'export function main() { if ((globalThis as any).scheduleBroken) throw new Error("db down"); return "fine" }');
    await createScript(s, 'u/admin/alert', 'export function main(failed_times: number, error: any, tag: string) { return { failed_times, message: error.message, tag } }');
    await createScript(s, 'u/admin/recovered', 'export function main(failed_times: number, error: any, success_result: unknown, previous_job_id: string) { return { failed_times, message: error.message, success_result, previous_job_id } }');
    const tick = await scheduleEvery5s(s, {
      path: 'u/admin/watched',
      script_path: 'u/admin/flaky_job',
      on_failure: 'u/admin/alert',
      on_failure_times: 2,
      on_failure_extra_args: { tag: 'db' },
      on_recovery: 'u/admin/recovered',
      on_recovery_times: 2,
    });
    const handlerRuns = async (path: string) => (await s.deps.store.listJobs({ workspace_id: 'main', script_path: path, limit: 100 })).reverse();

    (globalThis as { scheduleBroken?: boolean }).scheduleBroken = true;
    await tick();
    expect(await handlerRuns('u/admin/alert')).toHaveLength(0);
    const second = startedJob(await tick());
    await tick();
    const alerts = await handlerRuns('u/admin/alert');
    expect(alerts.map((j) => j.result)).toEqual([{ failed_times: 2, message: 'db down', tag: 'db' }, { failed_times: 3, message: 'db down', tag: 'db' }]);
    expect((await s.job(second!)).status).toBe('failed');

    (globalThis as { scheduleBroken?: boolean }).scheduleBroken = false;
    const fixed = startedJob(await tick());
    const [recovery] = await handlerRuns('u/admin/recovered');
    expect(recovery.result).toMatchObject({ failed_times: 3, message: 'db down', success_result: 'fine' });
    expect((recovery.args as { job_id: string }).job_id).toBe(fixed);
    await tick();
    expect(await handlerRuns('u/admin/recovered')).toHaveLength(1);
    const schedule = await (await s.fetch('/api/w/main/schedules/get/u/admin/watched')).json();
    expect(schedule).toMatchObject({ failure_streak: 0, on_failure_times: 2, on_recovery: 'u/admin/recovered' });
  });

  it('counts a failure while the schedule document keeps changing under it (a busy ticker on a slow store)', async () => {
    const s = await inProcessService();
    await createScript(s, 'u/admin/breaks', 'export function main() { throw new Error("disk full") }');
    await createScript(s, 'u/admin/alert', 'export function main(job_id: string, error: any) { return { job_id, message: error.message } }');
    const tick = await scheduleEvery5s(s, { path: 'u/admin/busy', script_path: 'u/admin/breaks', on_failure: 'u/admin/alert' });
    // Another writer (the ticker claiming the next tick, an edit) lands between each read and
    // write of the failure count, a dozen times in a row: on a loaded machine with a slow store,
    // and a schedule every second, the count's read-then-write loses often.
    const interruptionsLeft = interruptWrites(s, 12, (e) => e.kind === 'schedule' && (e.value as { failure_streak: number }).failure_streak > 0);
    const outcome = await tick();
    expect(outcome.ran && (await s.job(outcome.jobId!)).status).toBe('failed');
    expect(interruptionsLeft()).toBe(0);
    const alerts = await s.deps.store.listJobs({ workspace_id: 'main', script_path: 'u/admin/alert', limit: 100 });
    expect(alerts.map((j) => j.result)).toEqual([{ job_id: outcome.ran && outcome.jobId, message: 'disk full' }]);
    const schedule = await (await s.fetch('/api/w/main/schedules/get/u/admin/busy')).json();
    expect(schedule).toMatchObject({ failure_streak: 1, last_failure: { job_id: outcome.ran && outcome.jobId } });
  });

  it("saves a user's edit while the ticker keeps writing the schedule under it", async () => {
    const s = await inProcessService();
    await failingSchedule(s);
    // Ticks claimed and outcomes counted land between each read and write of the edit, a dozen
    // times in a row (a schedule every second on a slow store).
    const interruptionsLeft = interruptWrites(s, 12, (e) => e.kind === 'schedule' && (e.value as { summary: string }).summary === 'renamed');
    const res = await s.post('/api/w/main/schedules/update/u/admin/nightly', { schedule: '*/5 * * * * *', script_path: 'u/admin/breaks', on_failure: 'u/admin/alert', summary: 'renamed' });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(interruptionsLeft()).toBe(0);
    expect((await (await s.fetch('/api/w/main/schedules/get/u/admin/nightly')).json()).summary).toBe('renamed');
  });

  /** A schedule every 5 s whose script always fails, with `u/admin/alert` as its on_failure. */
  async function failingSchedule(s: InProcessService): Promise<() => Promise<string>> {
    await createScript(s, 'u/admin/breaks', 'export function main() { throw new Error("disk full") }');
    await createScript(s, 'u/admin/alert', 'export function main(job_id: string, failed_times: number) { return { job_id, failed_times } }');
    const tick = await scheduleEvery5s(s, { path: 'u/admin/nightly', script_path: 'u/admin/breaks', on_failure: 'u/admin/alert' });
    return async () => {
      const outcome = await tick();
      if (!outcome.ran || !outcome.jobId) throw new Error('the tick did not run');
      return outcome.jobId;
    };
  }
  /**
   * Creates the schedule `body` describes, every 5 s from a whole second of the test's clock, and
   * answers its next tick: the clock moves 5 s, the due tick runs, and what it started settles.
   */
  async function scheduleEvery5s(s: InProcessService, body: { path: string } & Record<string, unknown>): Promise<() => Promise<TickOutcome>> {
    s.clock.advance(1000 - (s.clock.now().getTime() % 1000));
    const res = await s.post('/api/w/main/schedules/create', { ...body, schedule: '*/5 * * * * *' });
    expect(res.status, await res.clone().text()).toBe(201);
    return async () => {
      s.clock.advance(5000);
      const outcome = await runDueTick(s.deps, 'main', body.path, s.clock.now());
      await s.settled();
      return outcome;
    };
  }
  const startedJob = (outcome: TickOutcome) => (outcome.ran ? outcome.jobId : null);
  const alerts = async (s: InProcessService) => s.deps.store.listJobs({ workspace_id: 'main', script_path: 'u/admin/alert', limit: 100 });
  const schedule = async (s: InProcessService, path = 'u/admin/nightly') => (await (await s.fetch(`/api/w/main/schedules/get/${path}`)).json()) as { failure_streak: number; uncounted_runs: Array<{ job_id: string }>; handlers_due: unknown[] };
  /** The next schedule write `when` picks throws, as a process stopping before it would leave things. */
  function stopBefore(s: InProcessService, when: (e: Entity) => boolean): void {
    const replace = s.deps.store.replaceEntity.bind(s.deps.store);
    let stopped = false;
    s.deps.store.replaceEntity = async (e, expectedVersion, events) => {
      if (!stopped && e.kind === 'schedule' && when(e)) {
        stopped = true;
        throw new Error('the process stopped');
      }
      return replace(e, expectedVersion, events);
    };
  }

  it('counts a failed run whose count a stop prevented, and starts its on_failure, once', async () => {
    const s = await inProcessService();
    const tick = await failingSchedule(s);
    // The run's failure is stored; the process stops before the schedule counts it.
    stopBefore(s, (e) => (e.value as { failure_streak: number }).failure_streak > 0);
    const failed = await tick();
    expect((await s.job(failed)).status).toBe('failed');
    expect(await alerts(s)).toHaveLength(0);
    expect(await schedule(s)).toMatchObject({ failure_streak: 0, uncounted_runs: [{ job_id: failed }] });

    // Within the grace the run may still be counted by its own process: the sweep leaves it.
    expect(await settleScheduleOutcomes(s.deps, s.clock.now())).toEqual({ counted: 0, started: 0 });
    s.clock.advance(OUTCOME_GRACE_MS + 1000);
    expect(await settleScheduleOutcomes(s.deps, s.clock.now())).toEqual({ counted: 1, started: 1 });
    await s.settled();
    expect((await alerts(s)).map((j) => j.result)).toEqual([{ job_id: failed, failed_times: 1 }]);
    expect(await schedule(s)).toMatchObject({ failure_streak: 1, uncounted_runs: [], handlers_due: [] });

    // Counted again (a sweep and a late worker both saw it end): nothing more happens.
    await onScheduledJobFailed(s.deps, (await s.deps.store.getJob('main', failed)) as Job, { message: 'disk full' });
    s.clock.advance(OUTCOME_GRACE_MS + 1000);
    expect(await settleScheduleOutcomes(s.deps, s.clock.now())).toEqual({ counted: 0, started: 0 });
    await s.settled();
    expect(await alerts(s)).toHaveLength(1);
    expect((await schedule(s)).failure_streak).toBe(1);
  });

  it('starts an on_failure that a stop left owed, once, under the id it was owed with', async () => {
    const s = await inProcessService();
    const tick = await failingSchedule(s);
    // The failure is counted and its handler owed; the process stops before the handler is stored.
    const insertJob = s.store.insertJob.bind(s.store);
    let lost = 0;
    s.store.insertJob = async (job: Job) => {
      if (job.script_path === 'u/admin/alert' && lost++ === 0) throw new Error('the process stopped');
      return insertJob(job);
    };
    const failed = await tick();
    expect(await alerts(s)).toHaveLength(0);
    expect(await schedule(s)).toMatchObject({ failure_streak: 1, uncounted_runs: [], handlers_due: [{ job_id: failed, handler: 'u/admin/alert' }] });
    s.clock.advance(OUTCOME_GRACE_MS + 1000);
    expect(await settleScheduleOutcomes(s.deps, s.clock.now())).toEqual({ counted: 0, started: 1 });
    await s.settled();
    const first = handlerJobId('u/admin/nightly', failed, 'on_failure');
    expect((await alerts(s)).map((j) => [j.id, j.result])).toEqual([[first, { job_id: failed, failed_times: 1 }]]);
    expect((await schedule(s)).handlers_due).toEqual([]);

    // The next failure's handler is stored, but the process stops before it is taken off the
    // list: the sweep finds that run started and does not start it again.
    stopBefore(s, (e) => {
      const value = e.value as { handlers_due: unknown[]; failure_streak: number };
      return value.failure_streak === 2 && value.handlers_due.length === 0;
    });
    const second = await tick();
    const next = handlerJobId('u/admin/nightly', second, 'on_failure');
    expect((await alerts(s)).map((j) => j.id).sort()).toEqual([first, next].sort());
    expect((await schedule(s)).handlers_due).toMatchObject([{ id: next }]);
    s.clock.advance(OUTCOME_GRACE_MS + 1000);
    expect(await settleScheduleOutcomes(s.deps, s.clock.now())).toEqual({ counted: 0, started: 0 });
    await s.settled();
    expect((await schedule(s)).handlers_due).toEqual([]);
    expect(await alerts(s)).toHaveLength(2);
  });

  it("keeps an owed on_recovery's success_result out of the schedule and hands it over from the run", async () => {
    const s = await inProcessService();
    await createScript(s, 'u/admin/big', 'export function main() { if ((globalThis as any).bigBroken) throw new Error("down"); return "x".repeat(300_000) }');
    await createScript(s, 'u/admin/recovered', 'export function main(success_result: string, job_id: string) { return { length: success_result.length, job_id } }');
    const tick = await scheduleEvery5s(s, { path: 'u/admin/nightly', script_path: 'u/admin/big', on_recovery: 'u/admin/recovered' });
    (globalThis as { bigBroken?: boolean }).bigBroken = true;
    await tick();
    (globalThis as { bigBroken?: boolean }).bigBroken = false;
    // The recovery is owed, and its start is lost to a stop.
    const insertJob = s.store.insertJob.bind(s.store);
    let lost = 0;
    s.store.insertJob = async (job: Job) => (job.script_path === 'u/admin/recovered' && lost++ === 0 ? Promise.reject(new Error('the process stopped')) : insertJob(job));
    const fixed = startedJob(await tick());
    const owed = (await schedule(s)).handlers_due as Array<{ args: Record<string, unknown> }>;
    expect(owed).toHaveLength(1);
    expect(owed[0].args).not.toHaveProperty('success_result');
    expect(JSON.stringify(owed).length).toBeLessThan(10_000);
    s.clock.advance(OUTCOME_GRACE_MS + 1000);
    expect(await settleScheduleOutcomes(s.deps, s.clock.now())).toEqual({ counted: 0, started: 1 });
    await s.settled();
    const [recovery] = await s.deps.store.listJobs({ workspace_id: 'main', script_path: 'u/admin/recovered', limit: 10 });
    expect(recovery.result).toEqual({ length: 300_000, job_id: fixed });
  });

  it('costs a run of a schedule without handlers no write beyond its claim when it succeeds', async () => {
    const s = await inProcessService();
    await createScript(s, 'u/admin/fine', 'export function main() { return "fine" }');
    const tick = await scheduleEvery5s(s, { path: 'u/admin/quiet', script_path: 'u/admin/fine' });
    const version = async () => (await s.deps.store.getEntity('schedule', 'main', 'u/admin/quiet'))!.version;
    const before = await version();
    const outcome = await tick();
    expect(outcome.ran && (await s.job(outcome.jobId!)).status).toBe('success');
    expect(await version()).toBe(before + 1);
    expect((await schedule(s, 'u/admin/quiet')).uncounted_runs).toEqual([]);
  });

  it('takes a canceled run off the list without counting it', async () => {
    const s = await inProcessService();
    await failingSchedule(s);
    // The run is claimed and stored, and canceled before any worker takes it.
    const insertJob = s.store.insertJob.bind(s.store);
    let canceled = '';
    s.store.insertJob = async (job: Job) => {
      await insertJob(job);
      if (job.script_path === 'u/admin/breaks') {
        canceled = job.id;
        await s.store.completeJob(job.id, { status: 'canceled', result: { error: { name: 'Canceled', message: 'canceled by admin' } }, logs: '' }, s.clock.now().toISOString());
      }
    };
    s.clock.advance(5000);
    await runDueTick(s.deps, 'main', 'u/admin/nightly', s.clock.now());
    await s.settled();
    expect((await s.job(canceled)).status).toBe('canceled');
    expect((await schedule(s)).uncounted_runs).toMatchObject([{ job_id: canceled }]);
    s.clock.advance(OUTCOME_GRACE_MS + 1000);
    expect(await settleScheduleOutcomes(s.deps, s.clock.now())).toEqual({ counted: 0, started: 0 });
    expect(await schedule(s)).toMatchObject({ failure_streak: 0, uncounted_runs: [], handlers_due: [] });
    expect(await alerts(s)).toHaveLength(0);
  });

  it('forgets a claimed run that never started once the grace is over', async () => {
    const s = await inProcessService();
    await failingSchedule(s);
    // The tick is claimed; the process stops before the run is stored.
    const insertJob = s.store.insertJob.bind(s.store);
    s.store.insertJob = async (job: Job) => (job.script_path === 'u/admin/breaks' ? Promise.reject(new Error('the process stopped')) : insertJob(job));
    s.clock.advance(5000);
    const claimed = s.clock.now();
    await runDueTick(s.deps, 'main', 'u/admin/nightly', claimed).catch(() => undefined);
    await s.settled();
    const { uncounted_runs } = await schedule(s);
    s.clock.advance(OUTCOME_GRACE_MS + 1000);
    await settleScheduleOutcomes(s.deps, s.clock.now());
    expect((await schedule(s)).uncounted_runs.filter((r) => uncounted_runs.some((u) => u.job_id === r.job_id))).toEqual([]);
  });
});
