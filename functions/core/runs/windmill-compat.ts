import { getEntityValue } from '../store/entities.js';
import { getVisibleJob, isFinished } from '../jobs/jobs.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import { rootJob } from './job-lineage.js';

/**
 * The answers Windmill's client libraries expect where svc's own API has none of the same shape.
 * Each reads through the same permission checks as svc's own routes (docs/windmill.md).
 */

/** `variables/exists`: whether the variable is there, for a caller who may read that path. */
export async function variableExists(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<boolean> {
  rights.check('variables', 'read', path);
  return (await getEntityValue(deps.store, 'variable', rights.workspaceId, path)) !== null;
}

/** `resources/exists`: the same for a resource. */
export async function resourceExists(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<boolean> {
  rights.check('resources', 'read', path);
  return (await getEntityValue(deps.store, 'resource', rights.workspaceId, path)) !== null;
}

export interface ResultMaybe {
  completed: boolean;
  started: boolean;
  success: boolean | null;
  /** The result once completed (`{error}` for a failed job), null before. */
  result: unknown;
}

/** `jobs_u/completed/get_result_maybe`: what waitJob polls, for a job the caller may see. */
export async function jobResultMaybe(deps: CoreDeps, rights: Rights, id: string): Promise<ResultMaybe> {
  const job = await getVisibleJob(deps, rights, id);
  const completed = isFinished(job.status);
  return {
    completed,
    started: job.started_at !== null || completed,
    success: completed ? job.status === 'success' : null,
    // A failed or canceled job's result is `{error}`, which the clients read when success is false.
    result: completed ? job.result : null,
  };
}

/** The outermost flow job above a job (the job itself outside a flow), as Windmill's get_root_job_id. */
export async function rootJobId(deps: CoreDeps, rights: Rights, id: string): Promise<string> {
  const job = await getVisibleJob(deps, rights, id);
  return (await rootJob(deps.store, job.workspace_id, job)).id;
}
