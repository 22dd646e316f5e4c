import { derivedOnce } from '../scripts/version-cache.js';
import type { Job, Store } from '../../ports.js';

/**
 * The most levels of flow jobs above a sub-flow a flow step may start (docs/flows.md, "Sub-flows"):
 * a flow that runs itself, directly or through other flows, stops there instead of nesting for ever.
 * Branches and loop iterations are levels too (each is a flow job); one definition holds at most
 * about 20 of them (the JSON depth limit), so this leaves room for sub-flows of sub-flows.
 */
export const MAX_FLOW_DEPTH = 32;
/** The walk up stops here rather than loop: below the deepest sub-flow, a definition's own levels. */
const MAX_WALK = MAX_FLOW_DEPTH + 32;

/** What the walk up a job's flows needs of each: none of it ever changes once the job exists. */
export type Lineage = Pick<Job, 'id' | 'script_path' | 'parent_job'> & Partial<Pick<Job, 'run_depth' | 'started_by_job'>>;

/**
 * Walks `parent_job` up to the top: the flow context of a step and getRootJobId share this rule.
 * Each job above is read once per process and kept as its lineage alone: every step of every
 * iteration of a loop walked up to the same top-level flow job, whose arguments (the list the loop
 * goes over, say) were read and parsed again each time — for a loop over 1,000 records of 1 KB, a
 * megabyte per iteration and a third of the service's time.
 */
export async function rootJob(store: Store, workspaceId: string, job: Lineage): Promise<Lineage> {
  let root = job;
  for (let depth = 0; root.parent_job && depth < MAX_WALK; depth++) {
    const up = await lineageOf(store, workspaceId, root.parent_job);
    if (!up) break;
    root = up;
  }
  return root;
}

/**
 * The job at the top of `job`'s whole lineage: up its flows (`parent_job`) and, from a run a job
 * started with its token, up to that job (`started_by_job`), and so on. The jobs of everything
 * below it are counted on it (core/jobs/run-budget.ts). The walk is as long as the run depth limit
 * allows (each level a flow's own levels and one more), and stops at a job no longer found.
 */
export async function originJob(store: Store, workspaceId: string, job: Lineage, maxRunDepth: number): Promise<Lineage> {
  let origin = job;
  for (let hops = 0; hops < (maxRunDepth + 1) * MAX_WALK; hops++) {
    const above = origin.parent_job ?? origin.started_by_job;
    if (!above) break;
    const up = await lineageOf(store, workspaceId, above);
    if (!up) break;
    origin = up;
  }
  return origin;
}

/** How many jobs are above `job` (0 for a top-level job), counted up to `limit` at most. */
export async function jobDepth(store: Store, workspaceId: string, job: Lineage, limit: number): Promise<number> {
  let depth = 0;
  for (let up = job; up.parent_job && depth < limit; depth++) {
    const parent = await lineageOf(store, workspaceId, up.parent_job);
    if (!parent) break;
    up = parent;
  }
  return depth;
}

/**
 * How many jobs are above `job` in its whole lineage (0 for a job nothing above started), counted up
 * to `limit` at most: the flow jobs above it by `parent_job` until one that records its own depth
 * (`run_depth`, a run a job started with its token: run-admission.ts), whose depth is then added.
 */
export async function runDepth(store: Store, workspaceId: string, job: Lineage, limit: number): Promise<number> {
  let depth = 0;
  for (let up: Lineage | null = job; up && depth <= limit; depth++) {
    if (typeof up.run_depth === 'number') return Math.min(depth + up.run_depth, limit + 1);
    if (!up.parent_job) return depth;
    up = await lineageOf(store, workspaceId, up.parent_job);
  }
  return depth;
}

/** The lineage of job `id`, or null when there is no such job (not remembered: it may be inserted yet). */
export function lineageOf(store: Store, workspaceId: string, id: string): Promise<Lineage | null> {
  return derivedOnce(store, `lineage\n${workspaceId}\n${id}`, async () => {
    const job = await store.getJob(workspaceId, id);
    return (
      job && {
        id: job.id,
        script_path: job.script_path,
        parent_job: job.parent_job,
        ...(typeof job.run_depth === 'number' ? { run_depth: job.run_depth } : {}),
        ...(job.started_by_job ? { started_by_job: job.started_by_job } : {}),
      }
    );
  });
}
