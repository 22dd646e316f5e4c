import { readEntity, tryReplaceEntity } from '../store/entities.js';
import { resolveRunTarget } from '../jobs/run-target.js';
import { startRun } from '../runs/start-run.js';
import { errorText, log } from '../common/logger.js';
import { AGAIN, retry } from '../common/retry.js';
import { authorRights } from './author.js';
import { SCHEDULE_WRITE_RETRY, type Schedule } from './schedule-document.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * A schedule's `on_failure` and `on_recovery` handlers (the modelled service's shapes). The
 * schedule counts its runs failed in a row (`failure_streak`, kept on its document, so both shells
 * count alike): `on_failure` runs once `on_failure_times` runs in a row failed (at each failure
 * from then on, or, with `on_failure_exact`, only at exactly that count); `on_recovery` runs when a
 * run succeeds after at least `on_recovery_times` failures in a row. Handlers run as the
 * schedule's author and never throw: a handler that cannot start is logged, the run's outcome stands.
 */

/** A run a schedule started ended failed (the worker, the flow interpreter, the stuck-job sweep). */
export async function onScheduledJobFailed(deps: CoreDeps, job: Job, error: unknown): Promise<void> {
  if (!job.schedule_path || job.parent_job) return;
  await scheduledRunFailed(deps, job.workspace_id, job.schedule_path, job.id, error, job.started_at);
}

export async function scheduledRunFailed(deps: CoreDeps, workspaceId: string, path: string, jobId: string, error: unknown, startedAt: string | null = null): Promise<void> {
  const s = (await countOutcome(deps, workspaceId, path, (current) => ({ ...current, failure_streak: current.failure_streak + 1, last_failure: { job_id: jobId, error } })))?.after;
  if (!s?.on_failure) return;
  const due = s.on_failure_exact ? s.failure_streak === s.on_failure_times : s.failure_streak >= s.on_failure_times;
  if (!due) return;
  const args = { ...s.on_failure_extra_args, schedule_path: s.path, path: s.script_path, is_flow: s.is_flow, job_id: jobId, error, failed_times: s.failure_streak, started_at: startedAt };
  await runHandler(deps, workspaceId, s, s.on_failure, args, jobId);
}

/** A run a schedule started succeeded: the streak ends, and on_recovery may run. Costs a write only after failures. */
export async function onScheduledJobSucceeded(deps: CoreDeps, job: Job, result: unknown): Promise<void> {
  if (!job.schedule_path || job.parent_job) return;
  const counted = await countOutcome(deps, job.workspace_id, job.schedule_path, (current) => (current.failure_streak === 0 ? null : { ...current, failure_streak: 0, last_failure: null }));
  const previous = counted?.before;
  if (!previous?.on_recovery || previous.failure_streak < previous.on_recovery_times) return;
  const args = {
    ...previous.on_recovery_extra_args,
    schedule_path: previous.path,
    path: previous.script_path,
    is_flow: previous.is_flow,
    job_id: job.id,
    previous_job_id: previous.last_failure?.job_id ?? null,
    error: previous.last_failure?.error ?? null,
    failed_times: previous.failure_streak,
    success_result: result,
    started_at: job.started_at,
  };
  await runHandler(deps, job.workspace_id, previous, previous.on_recovery, args, job.id);
}

/**
 * Applies `change` to the schedule with an optimistic write, retried when the ticker or an edit
 * wrote it meanwhile (null from `change`: nothing to write). The schedule before and after, or null
 * when it is gone or the write kept losing.
 */
async function countOutcome(deps: CoreDeps, workspaceId: string, path: string, change: (current: Schedule) => Schedule | null): Promise<{ before: Schedule; after: Schedule } | null> {
  try {
    const exhausted = () => new Error(`the schedule changed under each of ${SCHEDULE_WRITE_RETRY.attempts} attempts`);
    return await retry({ ...SCHEDULE_WRITE_RETRY, exhausted }, async () => {
      const current = await readEntity(deps.store, 'schedule', workspaceId, path);
      if (!current) return null;
      const next = change(current.value);
      if (!next) return { before: current.value, after: current.value };
      return (await tryReplaceEntity(deps.store, deps.clock, current, next)) ? { before: current.value, after: next } : AGAIN;
    });
  } catch (e) {
    log.warn('schedule outcome not counted', { workspace: workspaceId, schedule: path, error: errorText(e) });
  }
  return null;
}

async function runHandler(deps: CoreDeps, workspaceId: string, s: Schedule, handler: string, args: Record<string, unknown>, jobId: string): Promise<void> {
  try {
    const rights = await authorRights(deps, workspaceId, s, `schedule ${s.path}`);
    const target = await resolveRunTarget(deps.store, workspaceId, (p) => rights.can('jobs', 'run', p), { by: 'path', path: handler });
    if (!target.ok) throw new Error(target.reason === 'forbidden' ? `${s.permissioned_as} may not run ${handler}` : `there is no ${target.what}`);
    await startRun(deps, rights, target.runnable, args, undefined, { trigger: 'schedule' });
  } catch (e) {
    log.error('schedule handler did not start', { workspace: workspaceId, schedule: s.path, handler, job_id: jobId, error: errorText(e) });
  }
}
