import { apartKeys } from '../flows/results-apart.js';
import type { Job, Store } from '../../ports.js';

/**
 * A finished job's payloads go (retention, `delete_after_use`): its arguments, result, logs and
 * stream, and for a flow job its run, which holds the flow's input and every step's result (the
 * large ones in documents of their own). The job itself stays listed.
 */
export async function scrubJobPayloads(store: Store, job: Pick<Job, 'id' | 'kind' | 'workspace_id'>): Promise<void> {
  await store.scrubJob(job.id);
  // The progress it reported (Windmill's setProgress).
  await store.deleteEntity('job_progress', job.workspace_id, job.id);
  if (job.kind !== 'flow') return;
  // The values its steps shared (Windmill's flow user state).
  await store.deleteEntity('flow_user_state', job.workspace_id, job.id);
  const run = await store.getEntity('flow_run', job.workspace_id, job.id);
  await store.deleteEntity('flow_run', job.workspace_id, job.id);
  // Its large results, kept apart (core/flows/results-apart.ts), after the run that names them.
  for (const key of run ? apartKeys(run.value) : []) await store.deleteEntity('flow_result', job.workspace_id, key);
}
