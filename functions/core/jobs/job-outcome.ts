import { onScheduledJobFailed, onScheduledJobSucceeded, settleScheduleOutcomes } from '../triggers/schedule-handlers.js';
import { onWorkspaceJobFailed, settleErrorHandlers } from '../workspace/workspace-error-handler.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * A job or flow ended failed (its completion was stored once, by the worker, the flow
 * interpreter or the stuck-job sweep, in both shells): its schedule's `on_failure` and the
 * workspace's error handler hear of it.
 */
export async function onJobFailed(deps: CoreDeps, job: Job, error: unknown): Promise<void> {
  await onScheduledJobFailed(deps, job, error);
  await onWorkspaceJobFailed(deps, job, error);
}

/** A job or flow a schedule started succeeded: the schedule's failure streak ends (and `on_recovery` may run). */
export async function onJobSucceeded(deps: CoreDeps, job: Job): Promise<void> {
  if (job.schedule_path) await onScheduledJobSucceeded(deps, job);
}

export interface OutcomeSweep {
  scheduleRunsCounted: number;
  scheduleHandlersStarted: number;
  errorHandlersStarted: number;
}

/**
 * What a stop between a run's stored outcome and the calls above left undone (each shell runs it
 * from time to time): scheduled runs left uncounted are counted, and the schedule handlers and
 * workspace error handlers left unstarted start.
 */
export async function settleOutcomes(deps: CoreDeps, now: Date): Promise<OutcomeSweep> {
  const schedules = await settleScheduleOutcomes(deps, now);
  const errorHandlersStarted = await settleErrorHandlers(deps, now);
  return { scheduleRunsCounted: schedules.counted, scheduleHandlersStarted: schedules.started, errorHandlersStarted };
}
