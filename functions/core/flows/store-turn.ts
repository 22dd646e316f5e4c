import { reserveHere } from '../jobs/jobs.js';
import { tryCreateEntity, tryReplaceEntity } from '../store/entities.js';
import { rememberFlowRun, type StoredFlowRun } from './run-cache.js';
import { runDocument } from './flow-run-document.js';
import { putResultsApart } from './results-apart.js';
import type { FlowRun } from './run-state.js';
import type { WorkerDeps } from '../deps.js';
import type { Job, JobSlot } from '../../ports.js';

/**
 * Storing a flow's turn: its run together with the step jobs the turn starts, in one write (one
 * commit in the local store), so a step costs no commit beyond its own job's. A worker of this
 * process is held for each new job where one is free before the write, and the job is stored
 * running for it (as insertRunningHere does); the others are stored queued.
 */

/** A step job this turn starts, as it was stored with the run: running on a worker held for it, or queued. */
export interface Start {
  job: Job;
  slot: JobSlot | null;
}

/**
 * Stores `run` (over `previous`, the stored one it was read from) with `newJobs`: the jobs as
 * stored, or null when someone else stored the run meanwhile and nothing was stored. The workers
 * held are released whenever nothing was stored; the caller runs the jobs once this answers.
 */
export async function storeTurn(deps: WorkerDeps, workspaceId: string, key: string, run: FlowRun, previous: StoredFlowRun | null, newJobs: Job[]): Promise<Start[] | null> {
  const starts: Start[] = [];
  let stored = false;
  try {
    for (const job of newJobs) {
      const reserved = await reserveHere(deps, job, { callerWaits: false, timeoutMs: deps.config.jobTimeoutMs, job });
      starts.push(reserved ? { job: reserved.running, slot: reserved.slot } : { job, slot: null });
    }
    stored = await storeRun(deps, workspaceId, key, run, previous, starts.map((s) => s.job));
    return stored ? starts : null;
  } finally {
    if (!stored) for (const { slot } of starts) slot?.cancel();
  }
}

async function storeRun(deps: WorkerDeps, workspaceId: string, key: string, run: FlowRun, previous: StoredFlowRun | null, jobs: Job[]): Promise<boolean> {
  const measured = new Map<string, number>();
  await putResultsApart(deps, workspaceId, key, run, previous?.value ?? null, measured);
  const doc = runDocument(run);
  const before = previous && runDocument(previous.value);
  if (jobs.length === 0 && before && JSON.stringify(before) === JSON.stringify(doc)) return true;
  const written = previous
    ? await tryReplaceEntity(deps.store, deps.clock, { ...previous, value: before! }, doc, undefined, jobs)
    : await tryCreateEntity(deps.store, deps.clock, 'flow_run', workspaceId, key, doc, undefined, jobs);
  if (written) rememberFlowRun({ ...written, value: run }, measured);
  return written !== null;
}
