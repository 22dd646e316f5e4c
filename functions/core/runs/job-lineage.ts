import type { Job, Store } from '../../ports.js';

/** Nesting deeper than this is not something a flow builds; the walk stops rather than loop. */
const MAX_FLOW_DEPTH = 20;

/** Walks `parent_job` up to the top: the flow context of a step and getRootJobId share this rule. */
export async function rootJob(store: Store, workspaceId: string, job: Job): Promise<Job> {
  let root = job;
  for (let depth = 0; root.parent_job && depth < MAX_FLOW_DEPTH; depth++) {
    const up = await store.getJob(workspaceId, root.parent_job);
    if (!up) break;
    root = up;
  }
  return root;
}
