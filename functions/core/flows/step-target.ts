import { jobPrincipal } from '../identity/auth.js';
import { Rights } from '../identity/permissions.js';
import { flowJobTarget, resolveRunTarget, scriptJobTarget, type JobTarget, type Runnable, type RunTarget } from '../jobs/run-target.js';
import type { WorkerDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/** The script or sub-flow a flow step names, found and checked by the rules every run follows. */

/** Why a step could not start; the name is the `error.name` the flow's result carries. */
type StepErrorName = 'InvalidIterator' | 'ForLoopLimit' | 'FlowDepthLimit' | 'JobsPerRunLimit' | 'TooManyQueuedJobs' | 'PermissionDenied' | 'FlowNotFound' | 'ScriptNotFound';

export class StepError extends Error {
  constructor(
    name: StepErrorName,
    message: string,
    /** More of the error the flow's result carries: a limit's value, say. */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = name;
  }
}

/**
 * A script or sub-flow step, resolved by the same rules as a webhook, with the permissions of
 * whoever started the flow. `missing` says what was not found.
 */
export async function resolveStep(deps: WorkerDeps, flowJob: Job, target: RunTarget, moduleId: string, missing: string): Promise<Runnable> {
  const user = await deps.store.getUser(flowJob.created_by);
  const rights = user ? await Rights.load(deps, jobPrincipal(user.username, user.is_admin, flowJob.workspace_id, flowJob.id, flowJob.created_scopes), flowJob.workspace_id) : null;
  const resolution = await resolveRunTarget(deps.store, flowJob.workspace_id, (path) => rights?.can('jobs', 'run', path) ?? false, target);
  if (resolution.ok) return resolution.runnable;
  if (resolution.reason === 'forbidden') throw new StepError('PermissionDenied', `step ${moduleId}: ${flowJob.created_by} may not run ${resolution.path}`);
  throw new StepError(target.by === 'path' && target.only === 'flow' ? 'FlowNotFound' : 'ScriptNotFound', `step ${moduleId}: ${missing}`);
}

export function jobTargetOf(runnable: Runnable): JobTarget {
  return runnable.kind === 'script' ? scriptJobTarget(runnable.script) : flowJobTarget(runnable.flow.path, runnable.flow.id);
}
