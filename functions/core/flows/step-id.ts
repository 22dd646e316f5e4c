import { derivedOnce } from '../scripts/version-cache.js';
import { flowModules } from './definition.js';
import { findFlowVersion } from './flows.js';
import { readFlowRun } from './run-cache.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * The id of the flow step a job runs, for Windmill's `WM_FLOW_STEP_ID` and the state path built on
 * it (core/runs/windmill-env.ts): an inline step's is on its job; a step that runs a script by
 * path is the module of its flow version that names that path, worked out once per version, and
 * only when several modules name the same path is the run read, which maps each step job to its
 * module.
 */
export async function flowStepId(deps: Pick<CoreDeps, 'store'>, job: Job): Promise<string | null> {
  if (job.kind === 'flowstep') return job.flow_module;
  const parent = job.parent_job;
  if (job.kind !== 'script' || !parent) return null;
  const ws = job.workspace_id;
  const version = await derivedOnce(deps.store, `parentversion\n${ws}\n${parent}`, async () => (await deps.store.getJob(ws, parent))?.flow_version ?? null);
  if (version === null) return null;
  const steps = await derivedOnce(deps.store, `pathsteps\n${ws}\n${version}\n${job.script_path}`, async () => {
    const flow = await findFlowVersion(deps.store, ws, version);
    return flow ? { ids: flowModules(flow.value).filter((m) => m.value.type === 'script' && m.value.path === job.script_path).map((m) => m.id) } : null;
  });
  if (!steps || steps.ids.length === 0) return null;
  if (steps.ids.length === 1) return steps.ids[0];
  const run = await readFlowRun(deps.store, ws, parent);
  return run?.value.step_modules?.[job.id] ?? null;
}
