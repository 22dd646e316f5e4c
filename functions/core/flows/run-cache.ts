import { typed, type StoredEntity } from '../store/entities.js';
import { resolveRun } from './flow-run-document.js';
import { deepFreeze } from '../common/deep-freeze.js';
import { isFinished } from '../jobs/jobs.js';
import { apartValues } from './results-apart.js';
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
 *
 * Kept with the flow jobs below, within one budget of MAX_CACHED_CHARS characters of JSON: a run
 * weighs its values kept apart (its input, large results and lists), a job its arguments. Without
 * it every unfinished flow a member started kept its input in this process's memory: 40 flows
 * waiting for an approval, each with an input of 8 MB, held 360 MB, and a thousand would have held
 * gigabytes (on AWS the flow runner has 256 MB). The entries read or written longest ago go first;
 * one larger than the budget is not kept, and its turns read it from the store.
 */
const MAX_ENTRIES = 2000;
export const MAX_CACHED_CHARS = 16 * 1024 * 1024;
let budgetChars = MAX_CACHED_CHARS;

/** A run is kept with the size of each of its values kept apart (by key): a later turn that keeps a value need not measure it again. */
type Entry = { run: StoredFlowRun; apartChars: ReadonlyMap<string, number>; chars: number } | { job: Job; chars: number };

/** Least recently used first: a Map iterates in insertion order, and an entry written or read again is put last. */
const entries = new Map<string, Entry>();
let cachedChars = 0;

const runKeyOf = (workspaceId: string, flowJobId: string) => `run\u0000${workspaceId}\u0000${flowJobId}`;
const jobKeyOf = (workspaceId: string, flowJobId: string) => `job\u0000${workspaceId}\u0000${flowJobId}`;

function forget(key: string): void {
  const entry = entries.get(key);
  if (!entry) return;
  entries.delete(key);
  cachedChars -= entry.chars;
}

function keep(key: string, entry: Entry): void {
  forget(key);
  if (entry.chars > budgetChars) return;
  entries.set(key, entry);
  cachedChars += entry.chars;
  for (const [oldest, { chars }] of entries) {
    if (cachedChars <= budgetChars && entries.size <= MAX_ENTRIES) break;
    entries.delete(oldest);
    cachedChars -= chars;
  }
}

/** An entry just read goes last: the entries of flows whose turns go on outlast those of flows that wait. */
function used<E extends Entry>(key: string, entry: E): E {
  if (entries.get(key) === entry) {
    entries.delete(key);
    entries.set(key, entry);
  }
  return entry;
}

/** What the cached runs and jobs hold, in characters of JSON (tests). */
export function runCacheChars(): number {
  return cachedChars;
}

/** Sets the budget (tests), emptying the cache; without an argument, the default. */
export function setRunCacheBudget(chars: number = MAX_CACHED_CHARS): void {
  budgetChars = chars;
  entries.clear();
  cachedChars = 0;
}

export async function readFlowRun(store: Store, workspaceId: string, flowJobId: string): Promise<StoredFlowRun | null> {
  const mine = entries.get(runKeyOf(workspaceId, flowJobId));
  if (mine && 'run' in mine && isStored(mine.run, await store.getEntityStamp('flow_run', workspaceId, flowJobId))) return used(runKeyOf(workspaceId, flowJobId), mine).run;
  const stored = await store.getEntity('flow_run', workspaceId, flowJobId);
  if (!stored) return null;
  const doc = typed('flow_run', stored);
  return { ...doc, value: await resolveRun(store, workspaceId, doc.value, (id) => readFlowRun(store, workspaceId, id)) };
}

function isStored(mine: StoredFlowRun, stamp: EntityStamp | null): boolean {
  return stamp !== null && stamp.version === mine.version && stamp.created_at === mine.created_at && stamp.updated_at === mine.updated_at;
}

/**
 * Called with what a write returned; a finished run will not be read for its next step.
 * `measured`: the sizes of the values the write kept apart that were measured for it
 * (putResultsApart); any other value it keeps apart is weighed from the run it was copied from,
 * when that was cached, or measured here.
 */
export function rememberFlowRun(written: StoredFlowRun, measured: ReadonlyMap<string, number> = new Map()): void {
  const key = runKeyOf(written.workspace_id, written.key);
  const before = entries.get(key);
  forget(key);
  if (written.value.status === 'finished') {
    forget(jobKeyOf(written.workspace_id, written.key));
    return;
  }
  // Deeply: a turn that changed a shared module would change every later turn's. Once per run, as
  // later turns share the frozen ones (and a version's modules are frozen already, flows.ts).
  deepFreeze(written.value.modules);
  if (written.value.failure_module) deepFreeze(written.value.failure_module);
  const known = before && 'run' in before ? before.apartChars : undefined;
  const apartChars = new Map<string, number>();
  let chars = 0;
  for (const [apartKey, value] of apartValues(written.value)) {
    const size = measured.get(apartKey) ?? known?.get(apartKey) ?? charsOf(value);
    apartChars.set(apartKey, size);
    chars += size;
  }
  keep(key, { run: written, apartChars, chars });
}

/**
 * The flow jobs whose turns this process took, by workspace and job. What a turn reads of its flow
 * job (its id, owner, scopes, arguments, version, parent) never changes while the job is not
 * finished; its status does, when a cancel finishes it. So a job read here before is taken again
 * while the store has the same status for it, asking for that field alone: a whole job read,
 * parsed and checked against its schema at every turn was a tenth of a turn's time. Frozen, as
 * every later turn shares it. Weighed by its arguments, within the budget above.
 */
export async function readFlowJob(store: Store, workspaceId: string, flowJobId: string): Promise<Job | null> {
  const key = jobKeyOf(workspaceId, flowJobId);
  const mine = entries.get(key);
  if (mine && 'job' in mine && (await store.getJobStatus(workspaceId, flowJobId)) === mine.job.status) return used(key, mine).job;
  forget(key);
  const job = await store.getJob(workspaceId, flowJobId);
  if (job?.kind !== 'flow' || isFinished(job.status)) return job;
  keep(key, { job: deepFreeze(job), chars: charsOf(job.args) });
  return job;
}

function charsOf(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}
