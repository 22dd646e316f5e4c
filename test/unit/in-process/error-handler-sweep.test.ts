import { describe, expect, it } from 'vitest';
import { ERROR_HANDLER_GRACE_MS, errorHandlerJobId, settleErrorHandlers } from '../../../functions/core/workspace/workspace-error-handler.js';
import type { Job } from '../../../functions/ports.js';
import { createScript, inProcessService, type InProcessService } from './harness.js';
import { aJob } from '../../contract/store-fixtures.js';

/**
 * The workspace error handler of a run that failed is started under an id made from the run's,
 * once; a start lost to a stop (the failure stored, the handler not) is made by the sweep.
 */
describe('workspace error handler sweep', () => {
  async function workspaceWithHandler(s: InProcessService, failing = true): Promise<void> {
    if (failing) await createScript(s, 'u/admin/fails', 'export function main() { throw new Error("disk full") }');
    await createScript(s, 'u/admin/on_error', 'export function main(job_id: string, error: any) { return { job_id, message: error.message } }');
    expect((await s.post('/api/w/main/workspaces/edit_error_handler', { path: 'u/admin/on_error' })).status).toBe(200);
  }
  const run = async (s: InProcessService) => {
    const id = await (await s.post('/api/w/main/jobs/run/p/u/admin/fails', {})).text();
    await s.settled();
    return id;
  };
  const handled = async (s: InProcessService) => s.deps.store.listJobs({ workspace_id: 'main', script_path: 'u/admin/on_error', limit: 100 });
  /** The next `times` starts of the handler are lost, as a process stopping before it stores them. */
  function loseHandlerStarts(s: InProcessService, times: number): void {
    const insertJob = s.store.insertJob.bind(s.store);
    let left = times;
    s.store.insertJob = async (job: Job) => (job.script_path === 'u/admin/on_error' && left-- > 0 ? Promise.reject(new Error('the process stopped')) : insertJob(job));
  }

  it('starts the handler of a failed run whose handler a stop prevented, once, under the id made from the run', async () => {
    const s = await inProcessService();
    await workspaceWithHandler(s);
    loseHandlerStarts(s, 1);
    const failed = await run(s);
    expect((await s.job(failed)).status).toBe('failed');
    expect(await handled(s)).toHaveLength(0);

    // Within the grace the run's own process may still start it: the sweep leaves it.
    expect(await settleErrorHandlers(s.deps, s.clock.now())).toBe(0);
    s.clock.advance(ERROR_HANDLER_GRACE_MS + 1000);
    expect(await settleErrorHandlers(s.deps, s.clock.now())).toBe(1);
    await s.settled();
    expect((await handled(s)).map((j) => [j.id, j.result])).toEqual([[errorHandlerJobId('main', failed), { job_id: failed, message: 'disk full' }]]);
    expect(await settleErrorHandlers(s.deps, s.clock.now())).toBe(0);

    // A run whose handler started in its own process gets no second one from the sweep.
    const next = await run(s);
    s.clock.advance(ERROR_HANDLER_GRACE_MS + 1000);
    expect(await settleErrorHandlers(s.deps, s.clock.now())).toBe(0);
    expect((await handled(s)).map((j) => j.id).sort()).toEqual([errorHandlerJobId('main', failed), errorHandlerJobId('main', next)].sort());
  });

  it('finds a run whose handler a stop prevented behind hundreds of newer failed flow steps', async () => {
    const s = await inProcessService();
    await workspaceWithHandler(s);
    loseHandlerStarts(s, 1);
    const failed = await run(s);
    // A flow whose steps kept failing after it: failed jobs, newer, none of them top-level.
    for (let i = 0; i < 250; i++) {
      s.clock.advance(10);
      const at = s.clock.now().toISOString();
      await s.store.insertJob(aJob('main', { kind: 'flowstep', parent_job: failed, flow_module: 'a', status: 'failed', created_at: at, started_at: at, completed_at: at, success: false, result: { error: { name: 'Error', message: 'step' } } }));
    }
    s.clock.advance(ERROR_HANDLER_GRACE_MS + 1000);
    expect(await settleErrorHandlers(s.deps, s.clock.now())).toBe(1);
    await s.settled();
    expect((await handled(s)).map((j) => j.id)).toEqual([errorHandlerJobId('main', failed)]);
  });

  it('finds a run whose handler a stop prevented while hundreds of runs fail after it, within the grace', async () => {
    const s = await inProcessService();
    await workspaceWithHandler(s);
    loseHandlerStarts(s, 1);
    const failed = await run(s);
    // 250 top-level runs failing in the 25 s after it, from 2 s on: all newer, all within the grace
    // of the pass below, which starts none of their handlers yet.
    s.clock.advance(2000);
    for (let i = 0; i < 250; i++) {
      s.clock.advance(100);
      const at = s.clock.now().toISOString();
      await s.store.insertJob(aJob('main', { script_path: 'u/admin/fails', status: 'failed', created_at: at, started_at: at, completed_at: at, success: false, result: { error: { name: 'Error', message: 'disk full' } } }));
    }
    s.clock.advance(ERROR_HANDLER_GRACE_MS - 2000 - 250 * 100 + 1000);
    expect(await settleErrorHandlers(s.deps, s.clock.now())).toBe(1);
    await s.settled();
    expect((await handled(s)).map((j) => j.id)).toEqual([errorHandlerJobId('main', failed)]);
  });

  it('leaves the runs that failed before the handler was set, and before a handler set by an older version was first swept', async () => {
    const s = await inProcessService();
    await createScript(s, 'u/admin/fails', 'export function main() { throw new Error("disk full") }');
    await run(s);
    s.clock.advance(1000);
    await workspaceWithHandler(s, false);
    s.clock.advance(ERROR_HANDLER_GRACE_MS + 1000);
    expect(await settleErrorHandlers(s.deps, s.clock.now())).toBe(0);

    // A setting stored before the sweep existed has no `sweep_from`: its first pass only sets it.
    const stored = (await s.deps.store.getEntity('error_handler', 'main', 'error_handler'))!;
    const { sweep_from, ...legacy } = stored.value as { sweep_from?: string };
    expect(sweep_from).toBeDefined();
    expect(await s.deps.store.replaceEntity({ ...stored, value: legacy, version: stored.version + 1 }, stored.version)).toBe(true);
    loseHandlerStarts(s, 1);
    await run(s);
    s.clock.advance(ERROR_HANDLER_GRACE_MS + 1000);
    expect(await settleErrorHandlers(s.deps, s.clock.now())).toBe(0);
    expect((await s.deps.store.getEntity('error_handler', 'main', 'error_handler'))!.value).toHaveProperty('sweep_from');
    s.clock.advance(ERROR_HANDLER_GRACE_MS + 1000);
    expect(await settleErrorHandlers(s.deps, s.clock.now())).toBe(0);
    expect(await handled(s)).toHaveLength(0);
  });
});
