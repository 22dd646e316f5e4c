import { ApiError } from '../common/errors.js';
import { getJob, isFinished, syncTimeout, type CallerWait } from '../jobs/jobs.js';
import { scrubJobPayloads } from '../jobs/scrub.js';
import { getFlowRun } from '../flows/run-state.js';
import { shapeSyncResponse, sandboxUserContent, InvalidResponseShape, type ShapedResponse, type ShapeOptions } from './sync-response.js';
import type { CoreDeps } from '../deps.js';
import { newJobId } from '../common/crypto.js';
import type { FinishedJob, Job } from '../../ports.js';

/**
 * The sync endpoints' answer: start the job with `start` (given the id to use, and that the
 * caller waits, so the job may run where the caller is), wait (at most the instance maximum),
 * shape the result (spec 4.4, 7.1-7.2), then honour the script's delete-after-use setting. The
 * wait is subscribed before the job exists, so the worker can hand the result straight over and
 * nothing is read back in the common case.
 */
export async function syncResponse(deps: CoreDeps, start: (id: string, wait: CallerWait) => Promise<Job>, shape: ShapeOptions = {}): Promise<ShapedResponse> {
  const id = newJobId();
  const firstWake = deps.signals.wait(id, Math.min(deps.config.syncMaxWaitMs, deps.config.pollIntervalMs));
  const job = await start(id, { callerWaits: true });
  const answer = await awaitAnswer(deps, job, firstWake);
  if (!answer) throw syncTimeout(job.id, deps.config.syncMaxWaitMs, job.workspace_id);
  const done = answer.job;
  try {
    // A failed job's result is `{error: {...}}`, answered with 200 like any result (spec 7.1).
    return sandboxUserContent(shapeSyncResponse(answer.result, shape));
  } catch (e) {
    // The job answered something HTTP cannot carry: a structured error naming what was wrong.
    if (e instanceof InvalidResponseShape) throw new ApiError(500, e.code, e.message, { job_id: job.id });
    throw e;
  } finally {
    if (done && job.delete_after_use) await scrubJobPayloads(deps.store, job);
  }
}

/**
 * Waits (at most the instance maximum) for the job's result — or, for a flow with an early-return
 * module, for that module's result, the rest of the flow running on (spec 4.4). Subscribes before
 * reading, so a change between the read and the wait cannot be missed.
 */
async function awaitAnswer(deps: CoreDeps, job: Job, firstWake: Promise<FinishedJob | undefined>): Promise<{ result: unknown; job: Pick<Job, 'result'> | null } | null> {
  const deadline = deps.clock.now().getTime() + deps.config.syncMaxWaitMs;
  const poll = deps.config.pollIntervalMs;
  // Handed over by the worker in this process: the answer, with nothing to read.
  const handed = await firstWake;
  if (handed) return { result: handed.result, job: handed };
  // Whether the run may answer early is fixed when it starts: a run without an early-return module
  // need not be read again at each step.
  let mayReturnEarly = job.kind === 'flow';
  // A final state stored in this process comes with its wake; a wake without one (a flow's step,
  // a log line) is news only for an early result. The job itself is read once per poll interval
  // (of real time, as the wait's timer), for what another process stored, rather than at every
  // step of a flow.
  let readAt = Number.NEGATIVE_INFINITY;
  for (;;) {
    const remaining = deadline - deps.clock.now().getTime();
    const sinceRead = performance.now() - readAt;
    const readDue = sinceRead >= poll;
    const wake = deps.signals.wait(job.id, Math.max(0, Math.min(remaining, readDue ? poll : poll - sinceRead)));
    if (readDue) {
      readAt = performance.now();
      const current = await getJob(deps, job.workspace_id, job.id);
      if (isFinished(current.status)) return { result: current.result, job: current };
    }
    if (mayReturnEarly) {
      const run = await getFlowRun(deps, job.workspace_id, job.id);
      if (run?.early_result) return { result: run.early_result.value, job: null };
      if (run && !run.early_return) mayReturnEarly = false;
    }
    if (remaining <= 0) return null;
    const woken = await wake;
    if (woken) return { result: woken.result, job: woken };
  }
}
