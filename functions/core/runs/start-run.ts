import { badRequest, notFound } from '../common/errors.js';
import { pushJob, type CallerWait, type JobOrigin } from '../jobs/jobs.js';
import { pushFlowJob } from '../flows/run-flow.js';
import { resolveRunTarget, type RunTarget, type Runnable } from '../jobs/run-target.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import type { Job, JobTrigger } from '../../ports.js';

/** Starting a run for an API caller (spec 4.1 webhooks), the same in both shells. */

/** What the target names, once the caller is known to be allowed to run it: 403 or 404 otherwise. */
export async function resolveForCaller(deps: Pick<CoreDeps, 'store'>, rights: Rights, target: RunTarget): Promise<Runnable> {
  const resolution = await resolveRunTarget(deps.store, rights.workspaceId, (path) => rights.can('jobs', 'run', path), target);
  if (resolution.ok) return resolution.runnable;
  if (resolution.reason === 'not_found') throw notFound(resolution.what);
  // A version named by hash or id that the caller may not even read answers as an unknown one.
  if (target.by === 'hash' && !rights.can('scripts', 'read', resolution.path)) throw notFound(`script version ${target.hash}`);
  if (target.by === 'flow_version' && !rights.can('flows', 'read', resolution.path)) throw notFound(`flow version ${target.version}`);
  throw rights.denial('jobs', 'run', resolution.path);
}

/**
 * Stores and queues the job that runs `runnable` with `args` for the caller, under `id` when given.
 * `wait`: the caller waits for the outcome, so a script job may run where the caller is (a flow
 * always goes to its flow engine).
 */
export async function startRun(deps: CoreDeps, rights: Rights, runnable: Runnable, args: Record<string, unknown>, id?: string, origin: JobOrigin = {}, wait: CallerWait = {}): Promise<Job> {
  return runnable.kind === 'flow'
    ? pushFlowJob(deps, rights.principal, runnable.flow, rights.workspaceId, args, id, origin)
    : pushJob(deps, rights.principal, runnable.script, args, id, origin, wait);
}

/** The triggers a webhook caller may name in `X-Svc-Trigger`: the clients svc ships label their own runs. */
export const CLIENT_TRIGGERS: readonly JobTrigger[] = ['cli', 'console', 'rerun'];

/**
 * What started a webhook call (spec 4.1): `webhook` unless the caller's `X-Svc-Trigger` header names
 * one of CLIENT_TRIGGERS. It is a label the caller chooses, not a right, so only those are taken;
 * anything else is a 400 rather than a run recorded under a name the caller did not mean.
 */
export function webhookOrigin(header: string | undefined): JobOrigin {
  if (header === undefined || header === '') return { trigger: 'webhook' };
  const claimed = CLIENT_TRIGGERS.find((t) => t === header.trim().toLowerCase());
  if (!claimed) throw badRequest('invalid_request', `X-Svc-Trigger: must be one of ${CLIENT_TRIGGERS.join(', ')}`, { field: 'X-Svc-Trigger' });
  return { trigger: claimed };
}
