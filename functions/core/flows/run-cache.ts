import { typed, type StoredEntity } from '../store/entities.js';
import { resolveRun } from './flow-run-document.js';
import { deepFreeze } from '../common/deep-freeze.js';
import { isFinished } from '../jobs/jobs.js';
import type { FlowRun } from './flow-documents.js';
import type { EntityStamp, Job, Store } from '../../ports.js';

/** A stored run with its modules put back (flow-run-document.ts). */
export type StoredFlowRun = Omit<StoredEntity<'flow_run'>, 'value'> & { value: FlowRun };

/**
 * The flow runs this process stored last, by workspace and flow job. A flow's next turn (its next
 * step) asks the store which write of its run is stored (its stamp, a few fields): while that is
 * the one written here, the run is the one written — its document checked against its schema
 * when it was written, its modules those of its version — so it is neither read, parsed nor
 * resolved again, work that grew with the run's steps. Any other write (another process or call
 * wrote it since) is read, parsed and resolved as usual. Callers copy before changing
 * the run (copyRun), as they must with any read; the modules they share are frozen.
 */
const MAX_RUNS = 1000;
const runs = new Map<string, StoredFlowRun>();

const keyOf = (workspaceId: string, flowJobId: string) => `${workspaceId}\u0000${flowJobId}`;

export async function readFlowRun(store: Store, workspaceId: string, flowJobId: string): Promise<StoredFlowRun | null> {
  const mine = runs.get(keyOf(workspaceId, flowJobId));
  if (mine && isStored(mine, await store.getEntityStamp('flow_run', workspaceId, flowJobId))) return mine;
  const stored = await store.getEntity('flow_run', workspaceId, flowJobId);
  if (!stored) return null;
  const doc = typed('flow_run', stored);
  return { ...doc, value: await resolveRun(store, workspaceId, doc.value, (id) => readFlowRun(store, workspaceId, id)) };
}

function isStored(mine: StoredFlowRun, stamp: EntityStamp | null): boolean {
  return stamp !== null && stamp.version === mine.version && stamp.created_at === mine.created_at && stamp.updated_at === mine.updated_at;
}

/** Called with what a write returned; a finished run will not be read for its next step. */
export function rememberFlowRun(written: StoredFlowRun): void {
  const key = keyOf(written.workspace_id, written.key);
  runs.delete(key);
  if (written.value.status === 'finished') {
    jobs.delete(key);
    return;
  }
  // Deeply: a turn that changed a shared module would change every later turn's. Once per run, as
  // later turns share the frozen ones (and a version's modules are frozen already, flows.ts).
  deepFreeze(written.value.modules);
  if (written.value.failure_module) deepFreeze(written.value.failure_module);
  runs.set(key, written);
  if (runs.size > MAX_RUNS) runs.delete(runs.keys().next().value!);
}

/**
 * The flow jobs whose turns this process took, by workspace and job. What a turn reads of its flow
 * job (its id, owner, scopes, arguments, version, parent) never changes while the job is not
 * finished; its status does, when a cancel finishes it. So a job read here before is taken again
 * while the store has the same status for it, asking for that field alone: a whole job read,
 * parsed and checked against its schema at every turn was a tenth of a turn's time. Frozen, as
 * every later turn shares it.
 */
const jobs = new Map<string, Job>();

export async function readFlowJob(store: Store, workspaceId: string, flowJobId: string): Promise<Job | null> {
  const key = keyOf(workspaceId, flowJobId);
  const mine = jobs.get(key);
  if (mine && (await store.getJobStatus(workspaceId, flowJobId)) === mine.status) return mine;
  jobs.delete(key);
  const job = await store.getJob(workspaceId, flowJobId);
  if (job?.kind !== 'flow' || isFinished(job.status)) return job;
  jobs.set(key, deepFreeze(job));
  if (jobs.size > MAX_RUNS) jobs.delete(jobs.keys().next().value!);
  return job;
}
