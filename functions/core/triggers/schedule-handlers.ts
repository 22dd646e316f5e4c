import { readEntity, listEntityValues, tryReplaceEntity } from '../store/entities.js';
import { errorOf, isFinished } from '../jobs/jobs.js';
import { derivedUuid } from '../common/crypto.js';
import { ApiError } from '../common/errors.js';
import { errorText, log } from '../common/logger.js';
import { AGAIN, retry } from '../common/retry.js';
import { resolveHandler, startHandlerRun } from './handler-run.js';
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
 *
 * Nothing is lost to a stop between the writes. A run's outcome is stored first and counted after,
 * in a write that also takes the run off `uncounted_runs` and records the handler it calls for in
 * `handlers_due`, under an id made from the run's; the handler then starts under that id and leaves
 * the list. The outcome sweep (`settleScheduleOutcomes`, which each shell runs from time to time)
 * counts the runs a stop left uncounted and starts the handlers it left owed. Counting a run twice
 * changes nothing (a failure is not counted again for the job already counted last, and a success
 * only ends a streak), and a handler whose id exists has started.
 */

/** How long a finished run may wait for its count, or an owed handler for its start, before the sweep does it. */
export const OUTCOME_GRACE_MS = 30_000;
/** Handlers kept owed at most (a store refusing every start must not grow the document without end). */
const MAX_HANDLERS_DUE = 20;
/** A handler still unable to start after this long (its schedule's author is gone, say) is given up, logged. */
const MAX_OWED_MS = 24 * 3600_000;

type HandlerDue = Schedule['handlers_due'][number];

/** A run a schedule started ended failed (the worker, the flow interpreter, the stuck-job sweep). */
export async function onScheduledJobFailed(deps: CoreDeps, job: Job, error: unknown): Promise<void> {
  if (!job.schedule_path || job.parent_job) return;
  await scheduledRunFailed(deps, job.workspace_id, job.schedule_path, job.id, error, job.started_at);
}

export async function scheduledRunFailed(deps: CoreDeps, workspaceId: string, path: string, jobId: string, error: unknown, startedAt: string | null = null): Promise<void> {
  await countFailure(deps, workspaceId, path, jobId, error, startedAt);
}

/** Counts a failed run (once); answers how many handlers it started. */
async function countFailure(deps: CoreDeps, workspaceId: string, path: string, jobId: string, error: unknown, startedAt: string | null): Promise<number> {
  const counted = await countOutcome(deps, workspaceId, path, (current) => {
    // Counted already (the sweep and the worker both saw it end): nothing changes.
    if (current.last_failure?.job_id === jobId) return uncounted(current, jobId) ? { ...current, uncounted_runs: without(current, jobId) } : null;
    const s: Schedule = { ...current, failure_streak: current.failure_streak + 1, last_failure: { job_id: jobId, error }, uncounted_runs: without(current, jobId) };
    if (!s.on_failure) return s;
    const due = s.on_failure_exact ? s.failure_streak === s.on_failure_times : s.failure_streak >= s.on_failure_times;
    if (!due) return s;
    const args = { ...s.on_failure_extra_args, schedule_path: s.path, path: s.script_path, is_flow: s.is_flow, job_id: jobId, error, failed_times: s.failure_streak, started_at: startedAt };
    return owe(deps, s, 'on_failure', s.on_failure, args, jobId);
  });
  return counted ? startOwed(deps, workspaceId, counted.after, jobId) : 0;
}

/** A run a schedule started succeeded: the streak ends, and on_recovery may run. */
export async function onScheduledJobSucceeded(deps: CoreDeps, job: Job): Promise<void> {
  if (!job.schedule_path || job.parent_job) return;
  await countSuccess(deps, job, job.schedule_path);
}

/** Counts a succeeded run (once); answers how many handlers it started (on_recovery reads its `success_result` from the run). */
async function countSuccess(deps: CoreDeps, job: Job, path: string): Promise<number> {
  const counted = await countOutcome(deps, job.workspace_id, path, (current) => {
    if (current.failure_streak === 0) return uncounted(current, job.id) ? { ...current, uncounted_runs: without(current, job.id) } : null;
    const s: Schedule = { ...current, failure_streak: 0, last_failure: null, uncounted_runs: without(current, job.id) };
    if (!current.on_recovery || current.failure_streak < current.on_recovery_times) return s;
    const args = {
      ...current.on_recovery_extra_args,
      schedule_path: current.path,
      path: current.script_path,
      is_flow: current.is_flow,
      job_id: job.id,
      previous_job_id: current.last_failure?.job_id ?? null,
      error: current.last_failure?.error ?? null,
      failed_times: current.failure_streak,
      started_at: job.started_at,
    };
    return owe(deps, s, 'on_recovery', current.on_recovery, args, job.id, true);
  });
  return counted ? startOwed(deps, job.workspace_id, counted.after, job.id) : 0;
}

/**
 * The outcome sweep: for each schedule, counts the runs that finished more than OUTCOME_GRACE_MS
 * ago uncounted, forgets claimed runs that never started, and starts the handlers owed for longer
 * than that. Returns the runs counted and the handlers started.
 */
export async function settleScheduleOutcomes(deps: CoreDeps, now: Date): Promise<{ counted: number; started: number }> {
  const before = now.getTime() - OUTCOME_GRACE_MS;
  let counted = 0;
  let started = 0;
  for (const ws of await deps.store.listWorkspaces()) {
    for (const { value: s } of await listEntityValues(deps.store, 'schedule', ws.id)) {
      try {
        for (const run of s.uncounted_runs.filter((r) => Date.parse(r.claimed_at) < before)) {
          const settled = await settleRun(deps, ws.id, s, run.job_id, before);
          if (settled === null) continue;
          counted += 1;
          started += settled;
        }
        const owed = s.handlers_due.filter((h) => Date.parse(h.due_at) < before);
        for (const h of owed) if (await startHandler(deps, ws.id, s, h)) started += 1;
      } catch (e) {
        log.error('schedule outcomes not settled', { workspace: ws.id, schedule: s.path, error: errorText(e) });
      }
    }
  }
  return { counted, started };
}

/**
 * Counts a run left uncounted once it finished (answering the handlers that started), or forgets
 * a run that never started; null when it is still running or finished too lately to tell.
 */
async function settleRun(deps: CoreDeps, workspaceId: string, s: Schedule, jobId: string, before: number): Promise<number | null> {
  const job = await deps.store.getJob(workspaceId, jobId);
  // Claimed, and no job came of it (the process stopped before the run was stored), or canceled,
  // which is neither a failure nor a success: it only leaves the list.
  if (!job || job.status === 'canceled') {
    await countOutcome(deps, workspaceId, s.path, (current) => (uncounted(current, jobId) ? { ...current, uncounted_runs: without(current, jobId) } : null));
    return null;
  }
  if (!isFinished(job.status) || !job.completed_at || Date.parse(job.completed_at) >= before) return null;
  if (job.status === 'success') return countSuccess(deps, job, s.path);
  return countFailure(deps, workspaceId, s.path, job.id, errorOf(job.result), job.started_at);
}

function uncounted(s: Schedule, jobId: string): boolean {
  return s.uncounted_runs.some((r) => r.job_id === jobId);
}

function without(s: Schedule, jobId: string): Schedule['uncounted_runs'] {
  return s.uncounted_runs.filter((r) => r.job_id !== jobId);
}

/** The schedule with a handler run owed for `jobId`'s outcome. */
function owe(deps: CoreDeps, s: Schedule, kind: 'on_failure' | 'on_recovery', handler: string, args: Record<string, unknown>, jobId: string, withResult = false): Schedule {
  const due: HandlerDue = { id: handlerJobId(s.path, jobId, kind), handler, args, job_id: jobId, due_at: deps.clock.now().toISOString(), with_result: withResult };
  return { ...s, handlers_due: [...s.handlers_due.filter((h) => h.id !== due.id), due].slice(-MAX_HANDLERS_DUE) };
}

/**
 * The id of the handler run a run's outcome calls for: the same each time it is asked for, so a
 * start repeated after a stop finds the run it started.
 */
export function handlerJobId(schedulePath: string, jobId: string, kind: 'on_failure' | 'on_recovery'): string {
  return derivedUuid(schedulePath, jobId, kind);
}

/** Starts the handlers the count of `jobId` owed (right after that count). */
async function startOwed(deps: CoreDeps, workspaceId: string, s: Schedule, jobId: string): Promise<number> {
  let started = 0;
  for (const h of s.handlers_due.filter((due) => due.job_id === jobId)) if (await startHandler(deps, workspaceId, s, h)) started += 1;
  return started;
}

/**
 * Applies `change` to the schedule with an optimistic write, retried when the ticker or an edit
 * wrote it meanwhile (null from `change`: nothing to write). The schedule before and after, or null
 * when it is gone, nothing changed, or the write kept losing.
 */
async function countOutcome(deps: CoreDeps, workspaceId: string, path: string, change: (current: Schedule) => Schedule | null): Promise<{ before: Schedule; after: Schedule } | null> {
  try {
    const exhausted = () => new Error(`the schedule changed under each of ${SCHEDULE_WRITE_RETRY.attempts} attempts`);
    return await retry({ ...SCHEDULE_WRITE_RETRY, exhausted }, async () => {
      const current = await readEntity(deps.store, 'schedule', workspaceId, path);
      if (!current) return null;
      const next = change(current.value);
      if (!next) return null;
      return (await tryReplaceEntity(deps.store, deps.clock, current, next)) ? { before: current.value, after: next } : AGAIN;
    });
  } catch (e) {
    log.warn('schedule outcome not counted', { workspace: workspaceId, schedule: path, error: errorText(e) });
  }
  return null;
}

/**
 * Starts an owed handler under its id (unless that run exists: it started), then takes it off the
 * list. A handler that cannot start for good (gone, forbidden, refused its arguments) is logged and
 * taken off too; one that failed otherwise (the store, its author gone) stays owed for the sweep,
 * for at most MAX_OWED_MS.
 */
async function startHandler(deps: CoreDeps, workspaceId: string, s: Schedule, h: HandlerDue): Promise<boolean> {
  let started = false;
  try {
    started = await startHandlerRun(deps, workspaceId, h.id, { trigger: 'schedule' }, async () => {
      const target = await resolveHandler(deps, workspaceId, s, `schedule ${s.path}`, h.handler);
      if (!target.ok) throw new ApiError(400, 'invalid_request', target.reason);
      const args = h.with_result ? { ...h.args, success_result: (await deps.store.getJob(workspaceId, h.job_id))?.result ?? null } : h.args;
      return { target, args };
    });
  } catch (e) {
    const forGood = (e instanceof ApiError && e.status < 500) || deps.clock.now().getTime() - Date.parse(h.due_at) > MAX_OWED_MS;
    log.error(forGood ? 'schedule handler did not start; given up' : 'schedule handler did not start yet', { workspace: workspaceId, schedule: s.path, handler: h.handler, job_id: h.job_id, error: errorText(e) });
    if (!forGood) return false;
  }
  await countOutcome(deps, workspaceId, s.path, (current) =>
    current.handlers_due.some((due) => due.id === h.id) ? { ...current, handlers_due: current.handlers_due.filter((due) => due.id !== h.id) } : null,
  );
  return started;
}
