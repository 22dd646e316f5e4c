import { onScheduledJobFailed, onScheduledJobSucceeded } from '../triggers/schedule-handlers.js';
import { onWorkspaceJobFailed } from '../workspace/workspace-error-handler.js';
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
