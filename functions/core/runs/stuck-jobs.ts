import { isFinished } from '../jobs/jobs.js';
import { log } from '../common/logger.js';
import { onJobFailed } from '../jobs/job-outcome.js';
import { leaveSlot } from '../jobs/concurrency.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * Jobs no worker will ever finish, failed with the reason so their users stop waiting: a job whose
 * every delivery failed (the queue gave up on it), and a job the reaper finds queued or running
 * far past any deadline (its message was lost, or its worker died and nothing redelivered it).
 * The shells decide when to look; these rules decide what counts as stuck and what is written.
 */

/** The error a stuck job is failed with, as its result: `{ error: { name, message } }`. */
export const STUCK_JOB_ERRORS = {
  undeliverable: 'JobUndeliverable',
  neverStarted: 'JobNeverStarted',
  workerLost: 'JobWorkerLost',
} as const;

/**
 * Fails a job the queue gave up on after `deliveries` attempts. Returns whether it was still
 * unfinished (a job that finished meanwhile keeps its outcome).
 */
export async function failUndeliverable(deps: CoreDeps, workspaceId: string, jobId: string, deliveries: number): Promise<boolean> {
  const job = await deps.store.getJob(workspaceId, jobId);
  if (!job || isFinished(job.status)) return false;
  const message = `the job could not be run: ${deliveries} deliveries to a worker failed, and the queue gave up on it`;
  return failStuck(deps, job, STUCK_JOB_ERRORS.undeliverable, message);
}

export interface ReaperLimits {
  /** A job still queued this long after it was created is failed. */
  queuedMs: number;
  /** A job still running this long after it started is failed: its worker is gone. */
  runningMs: number;
  /** Jobs failed per status in one pass, so a pass stays within its function's timeout. */
  batch: number;
}

/**
 * One pass of the reaper. A flow job is only reaped while queued (its execution never started):
 * once running, its Step Functions execution owns it and may legitimately wait for a year.
 */
export async function reapStuckJobs(deps: CoreDeps, limits: ReaperLimits): Promise<{ neverStarted: string[]; workerLost: string[] }> {
  const now = deps.clock.now().getTime();
  const iso = (ms: number) => new Date(ms).toISOString();
  const neverStarted: string[] = [];
  for (const job of await deps.store.listStaleJobs('queued', iso(now - limits.queuedMs), limits.batch)) {
    // Waiting for a concurrency slot is waiting its turn, not being lost: never failed for it.
    if (job.held) continue;
    const message = `the job was still queued ${Math.round(limits.queuedMs / 60_000)} minutes after it was created: no worker took it`;
    if (await failStuck(deps, job, STUCK_JOB_ERRORS.neverStarted, message)) neverStarted.push(job.id);
  }
  const workerLost: string[] = [];
  for (const job of await deps.store.listStaleJobs('running', iso(now - limits.runningMs), limits.batch)) {
    if (job.kind === 'flow') continue;
    const message = `the job was still running ${Math.round(limits.runningMs / 60_000)} minutes after it started, past its timeout: its worker was lost`;
    if (await failStuck(deps, job, STUCK_JOB_ERRORS.workerLost, message)) workerLost.push(job.id);
  }
  return { neverStarted, workerLost };
}

/** Keeps what the job logged so far; a job that finished meanwhile is left as it is. */
async function failStuck(deps: CoreDeps, job: Job, name: string, message: string): Promise<boolean> {
  const result = { error: { name, message } };
  const failed = await deps.store.completeJob(job.id, { status: 'failed', result, logs: job.logs }, deps.clock.now().toISOString());
  if (!failed) return false;
  log.warn('stuck job failed', { job_id: job.id, workspace_id: job.workspace_id, reason: name });
  deps.signals.notify(job.id, { status: 'failed', result });
  await leaveSlot(deps, job);
  // A step's flow goes on (and fails or retries as its definition says); a sub-flow's parent too.
  if (job.parent_job) await deps.flows.wake(job.workspace_id, job.parent_job);
  // A run its schedule started fails here as it would in a worker: its on_failure hears of it.
  await onJobFailed(deps, job, { name, message });
  return true;
}
