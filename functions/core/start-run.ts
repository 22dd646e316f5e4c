import { notFound } from './errors.js';
import { pushJob, type JobOrigin } from './jobs.js';
import { pushFlowJob } from './flows/run-flow.js';
import { resolveRunTarget, type RunTarget, type Runnable } from './run-target.js';
import type { Rights } from './permissions.js';
import type { CoreDeps } from './deps.js';
import type { Job } from '../ports.js';

/** Starting a run for an API caller (spec 4.1 webhooks), the same in both shells. */

/** What the target names, once the caller is known to be allowed to run it: 403 or 404 otherwise. */
export async function resolveForCaller(deps: Pick<CoreDeps, 'store'>, rights: Rights, target: RunTarget): Promise<Runnable> {
  const resolution = await resolveRunTarget(deps.store, rights.workspaceId, (path) => rights.can('jobs', 'run', path), target);
  if (resolution.ok) return resolution.runnable;
  if (resolution.reason === 'forbidden') throw rights.denial('jobs', 'run', resolution.path);
  throw notFound(resolution.what);
}

/** Stores and queues the job that runs `runnable` with `args` for the caller, under `id` when given. */
export async function startRun(deps: CoreDeps, rights: Rights, runnable: Runnable, args: Record<string, unknown>, id?: string, origin: JobOrigin = {}): Promise<Job> {
  return runnable.kind === 'flow'
    ? pushFlowJob(deps, rights.principal, runnable.flow, rights.workspaceId, args, id, origin)
    : pushJob(deps, rights.principal, runnable.script, args, id, origin);
}
