import type { Job, Store } from '../../ports.js';

/**
 * A finished job's payloads go (retention, `delete_after_use`): its arguments, result, logs and
 * stream, and for a flow job its run, which holds the flow's input and every step's result. The
 * job itself stays listed.
 */
export async function scrubJobPayloads(store: Store, job: Pick<Job, 'id' | 'kind' | 'workspace_id'>): Promise<void> {
  await store.scrubJob(job.id);
  if (job.kind === 'flow') await store.deleteEntity('flow_run', job.workspace_id, job.id);
}
