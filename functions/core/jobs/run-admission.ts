import { ApiError } from '../common/errors.js';
import { lineageOf, MAX_FLOW_DEPTH, originJob, runDepth, type Lineage } from '../runs/job-lineage.js';
import { countRunJobs, maxJobsPerRun, runJobsLimitMessage } from './run-budget.js';
import type { CoreDeps } from '../deps.js';
import type { Principal } from '../identity/auth.js';
import type { Job } from '../../ports.js';

/**
 * Whether a new run may be stored at all (docs/security.md, "Runaway jobs"): every script is
 * hostile, and one that runs itself through the API with its job token would otherwise grow for
 * ever (once per run) or exponentially (twice per run), filling the queue and the disk of every
 * workspace. Two bounds, both checked before anything is stored:
 *
 * - depth: a run a job starts with its token records that job (`started_by_job`) and its depth
 *   (`run_depth`: the starter's own depth, flows above it included, plus one); past the instance's
 *   limit (SVC_MAX_RUN_DEPTH, MAX_FLOW_DEPTH = 32 by default) it is refused with 400 `run_depth_limit`.
 * - backlog: a workspace with the instance's limit of queued (not yet started) jobs already
 *   (SVC_MAX_QUEUED_JOBS_PER_WORKSPACE, 10,000 by default) is refused a new run with 429
 *   `too_many_queued_jobs`, whoever starts it: a webhook, a job, a route, a schedule's tick (which
 *   is then spent and recorded as a failed start, schedule-ticks.ts).
 *
 * - jobs of the run: a run a job starts with its token is one more job of the run at the top of
 *   that job's lineage, refused with 400 `jobs_per_run_limit` past SVC_MAX_JOBS_PER_RUN (run-budget.ts).
 *
 * A flow's own steps are not new runs: they are stored by the flow (advance.ts), which checks the
 * same backlog and counts them on its run's top (core/flows/step-admission.ts).
 */

/** The most levels of jobs above a run a job started with its token (the same as a flow's sub-flows). */
export const DEFAULT_MAX_RUN_DEPTH = MAX_FLOW_DEPTH;
/** The most queued (not yet started) jobs a workspace may have before a new run is refused. */
export const DEFAULT_MAX_QUEUED_JOBS_PER_WORKSPACE = 10_000;

/** What a new run records of the job that started it; empty when no job did. */
export type RunLineage = Partial<Pick<Job, 'started_by_job' | 'run_depth'>>;

/**
 * Checks both bounds for a new run in `workspaceId` started by `principal`, and answers the lineage
 * the run's job records. Throws the refusal otherwise; nothing is stored either way.
 */
export async function admitRun(deps: Pick<CoreDeps, 'store' | 'config' | 'clock'>, principal: Principal, workspaceId: string): Promise<RunLineage> {
  const starter = principal.via === 'job' && principal.jobId ? await lineageOf(deps.store, workspaceId, principal.jobId) : null;
  const lineage = await lineageOfCaller(deps, principal, workspaceId, starter);
  await checkBacklog(deps, workspaceId);
  if (starter) await countOnOrigin(deps, workspaceId, starter);
  return lineage;
}

/** The depth a run started by `principal` would have, refused past the limit. */
async function lineageOfCaller(deps: Pick<CoreDeps, 'store' | 'config'>, principal: Principal, workspaceId: string, starter: Lineage | null): Promise<RunLineage> {
  if (principal.via !== 'job' || !principal.jobId) return {};
  const limit = deps.config.maxRunDepth ?? DEFAULT_MAX_RUN_DEPTH;
  // The starter was found running when its token was checked; its lineage never changes.
  const depth = starter ? (await runDepth(deps.store, workspaceId, starter, limit)) + 1 : 1;
  if (depth > limit) {
    throw new ApiError(
      400,
      'run_depth_limit',
      `job ${principal.jobId} may not start another run: it would be ${depth} levels of jobs deep, beyond the limit of ${limit} (runs started by jobs with their job tokens, and the flows above them, count)`,
      { limit, started_by_job: principal.jobId },
    );
  }
  return { started_by_job: principal.jobId, run_depth: depth };
}

/**
 * A run a job starts with its token is one more job of the run at the top of that job's lineage
 * (run-budget.ts): a script that starts itself twice per run stops there, not at 2^32 runs.
 */
async function countOnOrigin(deps: Pick<CoreDeps, 'store' | 'config'>, workspaceId: string, starter: Lineage): Promise<void> {
  const origin = await originJob(deps.store, workspaceId, starter, deps.config.maxRunDepth ?? DEFAULT_MAX_RUN_DEPTH);
  if (await countRunJobs(deps, origin.id, 1)) return;
  throw new ApiError(400, 'jobs_per_run_limit', `job ${starter.id} may not start another run: ${runJobsLimitMessage(deps, origin.id)}`, {
    limit: maxJobsPerRun(deps),
    started_by_job: starter.id,
    origin: origin.id,
  });
}

/**
 * How long a count of a workspace's queued jobs is believed, in this process. A count reads one
 * index entry per queued job (on AWS ~4.5 read units for an empty backlog, across nine queries in
 * parallel, and ~180 for 10,000), so counting at every new run would add that to every run: a
 * workspace found full is refused for this long without counting again, and one found with room
 * spends half of that room before it is counted again (half: other processes admit runs too). New
 * runs are accepted again at most this long after a full backlog shrinks.
 */
export const BACKLOG_MEMO_MS = 1000;

/** What the last count of a workspace's backlog left to admit without counting, until when. */
interface BacklogMemo {
  until: number;
  /** Runs still admitted on that count; 0 with `full` refuses, 0 without it counts again. */
  room: number;
  full: boolean;
}
/** Per store, the workspaces' last counts. */
const memos = new WeakMap<object, Map<string, BacklogMemo>>();

/** 429 when the workspace has its limit of queued jobs already (a flow's new steps are checked here too). */
export async function checkBacklog(deps: Pick<CoreDeps, 'store' | 'config' | 'clock'>, workspaceId: string): Promise<void> {
  const limit = deps.config.maxQueuedJobsPerWorkspace ?? DEFAULT_MAX_QUEUED_JOBS_PER_WORKSPACE;
  let byWorkspace = memos.get(deps.store);
  if (!byWorkspace) memos.set(deps.store, (byWorkspace = new Map()));
  const now = deps.clock.now().getTime();
  const memo = byWorkspace.get(workspaceId);
  const believed = memo && memo.until > now ? memo : undefined;
  if (believed && believed.room > 0) {
    believed.room--;
    return;
  }
  if (!believed?.full) {
    const queued = await deps.store.countQueuedJobs(workspaceId, limit);
    const full = queued >= limit;
    // This run takes one of the places the count found.
    byWorkspace.set(workspaceId, { until: now + BACKLOG_MEMO_MS, room: full ? 0 : Math.floor((limit - queued - 1) / 2), full });
    if (!full) return;
  }
  throw new ApiError(
    429,
    'too_many_queued_jobs',
    `workspace ${workspaceId} has ${limit} jobs queued, the most it may have waiting to start: no new run is accepted until some of them start or are canceled`,
    { limit, retry_after: Math.ceil(BACKLOG_MEMO_MS / 1000) },
  );
}
