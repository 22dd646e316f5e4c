import { describe, expect, it } from 'vitest';
import { runDueTick } from '../../../functions/core/triggers/schedule-ticks.js';
import { createScript, inProcessService, interruptWrites } from './harness.js';

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
    s.clock.advance(1000 - (s.clock.now().getTime() % 1000));
    const res = await s.post('/api/w/main/schedules/create', {
      path: 'u/admin/watched',
      schedule: '*/5 * * * * *',
      script_path: 'u/admin/flaky_job',
      on_failure: 'u/admin/alert',
      on_failure_times: 2,
      on_failure_extra_args: { tag: 'db' },
      on_recovery: 'u/admin/recovered',
      on_recovery_times: 2,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const tick = async () => {
      s.clock.advance(5000);
      const outcome = await runDueTick(s.deps, 'main', 'u/admin/watched', s.clock.now());
      await s.settled();
      return outcome.ran ? outcome.jobId : null;
    };
    const handlerRuns = async (path: string) => (await s.deps.store.listJobs({ workspace_id: 'main', script_path: path, limit: 100 })).reverse();

    (globalThis as { scheduleBroken?: boolean }).scheduleBroken = true;
    await tick();
    expect(await handlerRuns('u/admin/alert')).toHaveLength(0);
    const second = await tick();
    await tick();
    const alerts = await handlerRuns('u/admin/alert');
    expect(alerts.map((j) => j.result)).toEqual([{ failed_times: 2, message: 'db down', tag: 'db' }, { failed_times: 3, message: 'db down', tag: 'db' }]);
    expect((await s.job(second!)).status).toBe('failed');

    (globalThis as { scheduleBroken?: boolean }).scheduleBroken = false;
    const fixed = await tick();
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
    s.clock.advance(1000 - (s.clock.now().getTime() % 1000));
    const res = await s.post('/api/w/main/schedules/create', { path: 'u/admin/busy', schedule: '*/5 * * * * *', script_path: 'u/admin/breaks', on_failure: 'u/admin/alert' });
    expect(res.status, await res.clone().text()).toBe(201);
    // Another writer (the ticker claiming the next tick, an edit) lands between each read and
    // write of the failure count, a dozen times in a row: on a loaded machine with a slow store,
    // and a schedule every second, the count's read-then-write loses often.
    const interruptionsLeft = interruptWrites(s, 12, (e) => e.kind === 'schedule' && (e.value as { failure_streak: number }).failure_streak > 0);
    s.clock.advance(5000);
    const outcome = await runDueTick(s.deps, 'main', 'u/admin/busy', s.clock.now());
    await s.settled();
    expect(outcome.ran && (await s.job(outcome.jobId!)).status).toBe('failed');
    expect(interruptionsLeft()).toBe(0);
    const alerts = await s.deps.store.listJobs({ workspace_id: 'main', script_path: 'u/admin/alert', limit: 100 });
    expect(alerts.map((j) => j.result)).toEqual([{ job_id: outcome.ran && outcome.jobId, message: 'disk full' }]);
    const schedule = await (await s.fetch('/api/w/main/schedules/get/u/admin/busy')).json();
    expect(schedule).toMatchObject({ failure_streak: 1, last_failure: { job_id: outcome.ran && outcome.jobId } });
  });
});
