import { z } from 'zod';
import { allModules, findModule } from './definition.js';
import { parseStored, parseStoredJson } from '../documents/parse.js';
import { getFlowRun, type FlowRun } from './run-state.js';
import type { CoreDeps } from '../deps.js';
import { derivedOnce } from '../scripts/version-cache.js';
import type { Job, SharedFiles } from '../../ports.js';

/**
 * The `./shared` folder of `same_worker` flows (Windmill's habit): what one step leaves in it, the
 * next finds there, whichever worker or sandbox runs it. It is kept between steps as one object in
 * the workspace's blob store and goes when the flow that owns it finishes. Parallel branches each
 * start from the folder as it was; the last to finish leaves it as it was then.
 */

/** The folder's files by relative path, base64-encoded, as saveSharedFolder writes them. */
const storedFolder = z.object({ files: z.record(z.string(), z.string()) });

function blobKey(workspaceId: string, ownerJobId: string): string {
  return `_shared/${workspaceId}/${ownerJobId}.json`;
}

/** Whether a step of the run may use the folder at all. */
export function usesSharedFolder(run: FlowRun): boolean {
  return Boolean(run.same_worker) || allModules(run.modules).some((m) => m.same_worker);
}

/** The folder a flow step works in, or null when its flow (or the step itself) does not ask for one. */
export async function sharedFolderOf(deps: Pick<CoreDeps, 'store'>, job: Job): Promise<string | null> {
  if (!job.parent_job) return null;
  // Whether any step of a run may use a folder is fixed when the run starts: most never do, and
  // their steps need not read the run at all.
  const parent = job.parent_job;
  const mayUse = await derivedOnce(deps.store, `shared\n${job.workspace_id}\n${parent}`, async () => {
    const run = await getFlowRun(deps, job.workspace_id, parent);
    return run ? { uses: Boolean(run.shared_folder) && usesSharedFolder(run) } : null;
  });
  if (mayUse && !mayUse.uses) return null;
  const run = await getFlowRun(deps, job.workspace_id, parent);
  if (!run?.shared_folder) return null;
  const moduleId = run.step_modules[job.id];
  const module = moduleId ? findModule(run.modules, moduleId) : undefined;
  return run.same_worker || module?.same_worker ? blobKey(job.workspace_id, run.shared_folder) : null;
}

export async function loadSharedFolder(deps: Pick<CoreDeps, 'blobs'>, key: string): Promise<SharedFiles> {
  const bytes = await deps.blobs.get(key);
  if (!bytes) return {};
  const what = `shared folder ${key}`;
  return parseStored(storedFolder, parseStoredJson(new TextDecoder().decode(bytes), what, '(root)'), what).files;
}

export async function saveSharedFolder(deps: Pick<CoreDeps, 'blobs'>, key: string, files: SharedFiles): Promise<void> {
  await deps.blobs.put(key, new TextEncoder().encode(JSON.stringify({ files })), 'application/json');
}

export async function deleteSharedFolder(deps: Pick<CoreDeps, 'blobs'>, workspaceId: string, ownerJobId: string): Promise<void> {
  await deps.blobs.delete(blobKey(workspaceId, ownerJobId));
}
