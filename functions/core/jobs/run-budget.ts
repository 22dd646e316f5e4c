import type { CoreDeps } from '../deps.js';

/**
 * The most jobs one top-level run may consist of in all (docs/security.md, "Runaway jobs"): its own
 * job, its flow's steps, branches, loop iterations and sub-flows at every level, and the runs its
 * jobs start with their job tokens and everything below those. The depth limits alone let a flow
 * whose 200 branches each run the flow again make 200^32 jobs, and a loop of loops multiply the
 * same way: one member would fill the queue and the disk of every workspace.
 *
 * The jobs are counted on the job at the top (Store.countRunJobs: an atomic add bounded by the
 * limit, on a small record beside that job, so branches counting at once never conflict), before anything they need is
 * stored: a flow's turn counts the jobs it is about to make (one write per step that makes jobs,
 * none for a plain script run), and a run started with a job token counts its own job.
 */
export const DEFAULT_MAX_JOBS_PER_RUN = 100_000;
/**
 * What the setting may be: a run is at least its own job, and the count is exact (and a number
 * DynamoDB's client writes into a condition at all) only up to 2^53 - 1. The shells' configs refuse
 * anything else at start, where the store would otherwise fail every count (a 500 on every run a
 * job starts).
 */
export const JOBS_PER_RUN_RANGE = { min: 1, max: Number.MAX_SAFE_INTEGER } as const;

/** The setting as the shells' configs read it (`SVC_MAX_JOBS_PER_RUN` locally, `MAX_JOBS_PER_RUN` on AWS), refused out of range. */
export function maxJobsPerRunFromEnv(env: Record<string, string | undefined>, name: string): number {
  const value = env[name];
  if (value === undefined || value === '') return DEFAULT_MAX_JOBS_PER_RUN;
  const n = Number(value);
  const { min, max } = JOBS_PER_RUN_RANGE;
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name}: expected a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

export function maxJobsPerRun(deps: Pick<CoreDeps, 'config'>): number {
  return deps.config.maxJobsPerRun ?? DEFAULT_MAX_JOBS_PER_RUN;
}

/**
 * Counts `count` new jobs of the run whose top is job `origin`: false, counting nothing, when the
 * run would then be more than the limit's jobs (the top's own job is one of them).
 */
export function countRunJobs(deps: Pick<CoreDeps, 'store' | 'config'>, origin: string, count: number): Promise<boolean> {
  return deps.store.countRunJobs(origin, count, maxJobsPerRun(deps) - 1);
}

/** Gives back jobs counted by a turn that then stored nothing (it lost a race or failed). */
export async function uncountRunJobs(deps: Pick<CoreDeps, 'store'>, origin: string, count: number): Promise<void> {
  if (count > 0) await deps.store.countRunJobs(origin, -count, 0);
}

/** What a refusal says: the limit, and that everything below the top counts. */
export function runJobsLimitMessage(deps: Pick<CoreDeps, 'config'>, origin: string): string {
  return `run ${origin} may not make more jobs: it would be more than ${maxJobsPerRun(deps)} jobs in all, this instance's limit (every step, branch, loop iteration and sub-flow at every level counts, and every run its jobs start with their job tokens)`;
}
