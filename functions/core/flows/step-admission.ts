import { ApiError } from '../common/errors.js';
import { checkBacklog, DEFAULT_MAX_RUN_DEPTH } from '../jobs/run-admission.js';
import { countRunJobs, maxJobsPerRun, runJobsLimitMessage, uncountRunJobs } from '../jobs/run-budget.js';
import { originJob } from '../runs/job-lineage.js';
import { StepError } from './step-target.js';
import type { FlowRun } from './run-state.js';
import type { WorkerDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * Whether a flow step may make its jobs (docs/security.md, "Runaway jobs"): a step, branch, loop
 * iteration or sub-flow is a job like a run, and a flow that fans out (200 branches each running
 * the flow again) would otherwise make jobs without bound. Checked before the step stores anything
 * (a branch's or iteration's run is written as the step starts):
 *
 * - the workspace's backlog, for a step that fans out (a `branchall`'s branches, a for loop's
 *   iterations): with SVC_MAX_QUEUED_JOBS_PER_WORKSPACE jobs queued, the step fails with
 *   `TooManyQueuedJobs` (code `too_many_queued_jobs`) rather than wait: a waiting step would hold
 *   its flow (and a worker's turn) for as long as someone else's backlog lasts, and a failed step
 *   is what the flow's retries and failure module already know how to handle. A step that makes
 *   one job takes the place of the one that just ended, so it cannot grow the backlog past the
 *   runs admitted, and is not counted against it: on AWS a count is nine queries, and a step of a
 *   flow often runs in a process that has not counted within the last second;
 * - the run's jobs in all: the step's jobs are counted on the job at the top of the run
 *   (run-budget.ts), and past SVC_MAX_JOBS_PER_RUN the step fails with `JobsPerRunLimit`.
 *
 * A turn that counted jobs and then stored nothing (it lost the race to another turn) gives them
 * back; one that crashed in between leaves them counted, which only ever errs towards the limit.
 */

/** The jobs a turn counted, given back when the turn stores nothing. */
export interface CountedJobs {
  origin: string | null;
  count: number;
}

export function nothingCounted(): CountedJobs {
  return { origin: null, count: 0 };
}

/** Throws the step's failure when its `count` new jobs may not be made; counts them otherwise. */
export async function admitStepJobs(
  deps: WorkerDeps,
  flowJob: Job,
  run: FlowRun,
  counted: CountedJobs,
  moduleId: string,
  count: number,
): Promise<void> {
  if (count <= 0) return;
  if (count > 1) await checkFanOut(deps, flowJob, moduleId);
  const origin = await countedOn(deps, flowJob, run);
  const admitted = origin === flowJob.id ? await reserved(deps, run, counted, origin, count) : await counts(deps, counted, origin, count);
  if (!admitted) {
    throw new StepError(
      'JobsPerRunLimit',
      `step ${moduleId}: ${count === 1 ? 'its job' : `its ${count} jobs`} would not be made: ${runJobsLimitMessage(deps, origin)}`,
      {
        code: 'jobs_per_run_limit',
        limit: maxJobsPerRun(deps),
      },
    );
  }
}

/** A step that fans out fails when the workspace's backlog is full. */
async function checkFanOut(deps: WorkerDeps, flowJob: Job, moduleId: string): Promise<void> {
  try {
    await checkBacklog(deps, flowJob.workspace_id);
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== 'too_many_queued_jobs') throw e;
    throw new StepError('TooManyQueuedJobs', `step ${moduleId}: ${e.message}`, { code: 'too_many_queued_jobs', limit: e.details?.limit });
  }
}

/** Counts `count` jobs on `origin`, remembering them to give back. False when they do not fit. */
async function counts(deps: WorkerDeps, counted: CountedJobs, origin: string, count: number): Promise<boolean> {
  if (!(await countRunJobs(deps, origin, count))) return false;
  counted.origin = origin;
  counted.count += count;
  return true;
}

/**
 * How many jobs a top-level run counts on itself ahead, past what a step asks for. Its turns come
 * one after another (each stores the run or starts again), so what it counted ahead is kept in its
 * run and taken by its next steps without a write each: a flow of 40 steps counts 3 times, not 40.
 * What is left when the run ends stays counted, which only ever errs towards the limit.
 */
const RESERVE_AHEAD = 15;

/**
 * For a run counted on its own job: takes `count` jobs from what it counted ahead, or counts them
 * with RESERVE_AHEAD more (only them when the limit leaves no more room). False when not even
 * `count` fits.
 */
async function reserved(deps: WorkerDeps, run: FlowRun, counted: CountedJobs, origin: string, count: number): Promise<boolean> {
  const ahead = run.jobs_reserved ?? 0;
  if (ahead >= count) {
    run.jobs_reserved = ahead - count;
    return true;
  }
  for (const more of [RESERVE_AHEAD, 0]) {
    // Given back if this turn stores nothing; the run as stored keeps what is left over.
    if (!(await counts(deps, counted, origin, count - ahead + more))) continue;
    run.jobs_reserved = more;
    return true;
  }
  return false;
}

/** Gives back what a turn that stored nothing counted. */
export async function uncount(deps: WorkerDeps, counted: CountedJobs): Promise<void> {
  if (counted.origin) await uncountRunJobs(deps, counted.origin, counted.count);
  counted.count = 0;
}

/**
 * The job the run's jobs are counted on: kept in the run once found. A top-level flow's is its own
 * job (no read); a sub-flow's, or a flow a job started with its token, is found up its lineage once.
 */
async function countedOn(deps: WorkerDeps, flowJob: Job, run: FlowRun): Promise<string> {
  if (!run.jobs_counted_on) {
    const limit = deps.config.maxRunDepth ?? DEFAULT_MAX_RUN_DEPTH;
    run.jobs_counted_on = (await originJob(deps.store, flowJob.workspace_id, flowJob, limit)).id;
  }
  return run.jobs_counted_on;
}
