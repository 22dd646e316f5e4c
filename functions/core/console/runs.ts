import { isFinished } from '../jobs/jobs.js';
import { cancelJob } from '../jobs/cancel-job.js';
import { ApiError } from '../common/errors.js';
import { getFlowRun, waitingStatus } from '../flows/run-state.js';
import { legacyScriptHash } from '../jobs/run-target.js';
import { decodeCursor, encodeCursor, runFilterSchema, storeQuery, type RunFilter } from './run-filter.js';
import type { CoreDeps } from '../deps.js';
import type { Rights } from '../identity/permissions.js';
import type { Job, JobPosition, JobTrigger } from '../../ports.js';

/**
 * The console's run list: the jobs the caller may read (Rights.canJob, as for every job route),
 * newest first, a page at a time. Rights are checked on the jobs the store returns, so a page may
 * need several store reads; after MAX_READS the page is returned short, with a cursor to go on.
 */

/** One run as the list shows it: no logs, no result (the run page reads those). */
export interface RunSummary {
  id: string;
  status: string;
  path: string;
  kind: Job['kind'];
  /** What started it; null for jobs stored before triggers were recorded. */
  trigger: JobTrigger | null;
  parent_job: string | null;
  created_by: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** From start to end (or to now while it runs); null before it started. */
  duration_ms: number | null;
  /** Answered from its `cache_ttl` cache: nothing ran (no start, no duration). */
  cache_hit: boolean;
  success: boolean | null;
  attempts: number;
  args: Record<string, unknown> | null;
  /** What a re-run starts: the script version by hash, or the flow version. */
  script_hash: string | null;
  flow_version: number | null;
  /** Whether the caller may cancel it now (unfinished and allowed): the page shows no button otherwise. */
  can_cancel: boolean;
}

export interface RunPage {
  runs: RunSummary[];
  next_cursor: string | null;
}

const MAX_READS = 8;

export async function listRuns(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, filter: RunFilter): Promise<RunPage> {
  rights.check('jobs', 'read');
  const query = storeQuery(rights.workspaceId, filter);
  if (!query) return { runs: [], next_cursor: null };
  let after = decodeCursor(filter.cursor);
  const runs: RunSummary[] = [];
  const now = deps.clock.now().getTime();
  for (let read = 0; read < MAX_READS; read++) {
    const batch = await deps.store.queryJobs({ ...query, after, limit: filter.per_page });
    for (const job of batch) {
      after = position(job);
      if (!rights.canJob(job, 'read')) continue;
      if (filter.top_level && job.parent_job !== null) continue;
      const status = await shownStatus(deps, job);
      if (filter.status && status !== filter.status) continue;
      runs.push(summary(job, status, rights, now));
      if (runs.length === filter.per_page) {
        const more = job !== batch.at(-1) || batch.length === filter.per_page;
        return { runs, next_cursor: more ? encodeCursor(after) : null };
      }
    }
    if (batch.length < filter.per_page) return { runs, next_cursor: null };
  }
  return { runs, next_cursor: after ? encodeCursor(after) : null };
}

/**
 * The newest run of exactly this path the caller may read, or null: the workspace home's "Last
 * run": `path_exact`, since the run list's `path` is a prefix (f/a/b would also list f/a/bc's runs).
 */
export async function lastRunOf(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, path: string): Promise<RunSummary | null> {
  return (await listRuns(deps, rights, runFilterSchema.parse({ path_exact: path, per_page: 1 }))).runs[0] ?? null;
}

function position(job: Job): JobPosition {
  return { created_at: job.created_at, id: job.id };
}

/** A running flow may be waiting for an approval step or a ConsentGate: its run says which. */
async function shownStatus(deps: Pick<CoreDeps, 'store'>, job: Job): Promise<string> {
  if (job.kind !== 'flow' || job.status !== 'running') return job.status;
  const run = await getFlowRun(deps, job.workspace_id, job.id);
  return run ? waitingStatus(run, job.status) : job.status;
}

function summary(job: Job, status: string, rights: Rights, now: number): RunSummary {
  const started = job.started_at ? Date.parse(job.started_at) : null;
  const ended = job.completed_at ? Date.parse(job.completed_at) : now;
  return {
    id: job.id,
    status,
    path: job.script_path,
    kind: job.kind,
    trigger: job.trigger ?? null,
    parent_job: job.parent_job,
    created_by: job.created_by,
    created_at: job.created_at,
    started_at: job.started_at,
    completed_at: job.completed_at,
    duration_ms: started === null ? null : Math.max(0, ended - started),
    cache_hit: job.cache_hit === true,
    success: job.success,
    attempts: job.attempts,
    args: job.deleted ? null : job.args,
    script_hash: job.kind === 'script' ? legacyScriptHash(job) : null,
    flow_version: job.flow_version,
    can_cancel: !isFinished(job.status) && rights.canJob(job, 'cancel'),
  };
}

/** What a bulk cancel did with each id: canceled, or why not (a 403, 404 or 409 of the single cancel). */
export interface BulkCancelOutcome {
  canceled: string[];
  not_canceled: { id: string; status: number; message: string }[];
}

export const BULK_CANCEL_MAX = 1000;

/**
 * Cancels each job as the single cancel route would (same rights, same rules), one after the
 * other; a job that may not or cannot be canceled is reported, not an error for the rest.
 */
export async function cancelRuns(deps: CoreDeps, rights: Rights, ids: string[], reason: string | undefined): Promise<BulkCancelOutcome> {
  const outcome: BulkCancelOutcome = { canceled: [], not_canceled: [] };
  for (const id of new Set(ids)) {
    try {
      await cancelJob(deps, rights, id, reason);
      outcome.canceled.push(id);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      outcome.not_canceled.push({ id, status: error.status, message: error.message });
    }
  }
  return outcome;
}
