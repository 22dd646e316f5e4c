import { derivedOnce } from '../scripts/version-cache.js';
import { flowModules } from './definition.js';
import { findFlowVersion } from './flows.js';
import { readFlowRun } from './run-cache.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * A flow step's `timeout` (seconds), which the interpreter worked out when it started the step and
 * stored in the run by job id. The worker runs the job with it, so the step is stopped and fails
 * with a TimeoutError like any job that outlives its time; retries and continue_on_error then
 * apply as to any failure. Only flows that set a timeout somewhere cost the read of the run.
 */
export async function stepTimeoutSeconds(deps: Pick<CoreDeps, 'store'>, job: Job): Promise<number | null> {
  const parent = job.parent_job;
  if (!parent) return null;
  const ws = job.workspace_id;
  // A step's flow version is its own (inline scripts) or its parent flow job's (steps by path).
  const version = job.flow_version ?? (await derivedOnce(deps.store, `parentversion\n${ws}\n${parent}`, async () => (await deps.store.getJob(ws, parent))?.flow_version ?? null));
  if (version === null) return null;
  const hasTimeouts = await derivedOnce(deps.store, `steptimeouts\n${ws}\n${version}`, async () => {
    const flow = await findFlowVersion(deps.store, ws, version);
    return flow ? { any: flowModules(flow.value).some((m) => m.timeout !== undefined) } : null;
  });
  if (!hasTimeouts?.any) return null;
  const run = await readFlowRun(deps.store, ws, parent);
  return run?.value.step_timeouts?.[job.id] ?? null;
}
