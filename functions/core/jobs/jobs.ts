import { ApiError, notFound, conflict } from '../common/errors.js';
import { legacyScriptHash, scriptJobTarget, type JobTarget } from './run-target.js';
import { newJobId } from '../common/crypto.js';
import { answerFromCache } from './result-cache.js';
import { leaveSlot, takeSlotOrWait } from './concurrency.js';
import { concurrencyKeyOf, type RunSettings } from './run-settings.js';
import { admitRun } from './run-admission.js';
import { FINISHED_STATUSES, type Job, type JobListFilter, type JobSlot, type JobStatus, type RunIntent, type ScriptVersion } from '../../ports.js';
import type { CoreDeps } from '../deps.js';
import type { Principal } from '../identity/auth.js';
import type { Rights } from '../identity/permissions.js';
import type { JobView } from '../views/job-view.js';

/** Creating, finding and waiting for jobs. Cancelling on request is cancel-job.ts; running them is the worker's part. */

/** The signal a running job's worker listens on, apart from the job's own updates. */
export function cancelSignal(jobId: string): string {
  return `cancel:${jobId}`;
}

export function isFinished(status: JobStatus): boolean {
  return FINISHED_STATUSES.includes(status);
}

/** A new job in `queued`, with nothing run yet. */
export function queuedJob(
  createdAt: string,
  fields: JobTarget & Pick<Job, 'workspace_id' | 'parent_job' | 'args' | 'created_by'> & Partial<Pick<Job, 'id' | 'delete_after_use' | 'created_scopes' | 'schedule_path' | 'trigger' | 'priority' | 'started_by_job' | 'run_depth'>>,
  origin: JobOrigin = {},
): Job {
  const job: Job = {
    // Made only when the caller has none: a sync run's id is made before its job (sync-run.ts).
    id: fields.id ?? newJobId(),
    delete_after_use: false,
    // A flow's steps are started by the flow; anything else that names no trigger is a plain API call.
    trigger: fields.parent_job ? 'flow' : 'api',
    ...fields,
    status: 'queued',
    created_at: createdAt,
    started_at: null,
    completed_at: null,
    success: null,
    result: null,
    logs: '',
    result_stream: '',
    streaming: false,
    attempts: 0,
    deleted: false,
  };
  // Copied onto the job, not spread first into the caller's literal ({ ...origin, id, ... }): V8
  // builds that literal on its slow path, ~9 us per job where this takes ~1.
  return Object.assign(job, origin);
}

/** What started a job, when not a plain API call. */
export type JobOrigin = Partial<Pick<Job, 'schedule_path' | 'trigger'>>;

/** Whether whoever starts a job waits for its outcome in this request (sync webhooks, SSE streams). */
export interface CallerWait {
  callerWaits?: boolean;
}

/** The longest a script's run may last: its own timeout, within the instance's job timeout. */
export function runTimeoutMs(script: Pick<ScriptVersion, 'timeout'>, config: Pick<CoreDeps['config'], 'jobTimeoutMs'>): number {
  return Math.min(script.timeout ? script.timeout * 1000 : config.jobTimeoutMs, config.jobTimeoutMs);
}

/** Stores the job before anyone learns its id, then hands it to the queue: nothing accepted is lost. */
export async function pushJob(
  deps: CoreDeps,
  principal: Principal,
  script: ScriptVersion,
  args: Record<string, unknown>,
  id: string = newJobId(),
  origin: JobOrigin = {},
  wait: CallerWait = {},
): Promise<Job> {
  // Refused before anything is stored: too deep a chain of runs started by jobs, or a full backlog.
  const lineage = await admitRun(deps, principal, script.workspace_id);
  const job = queuedJob(
    deps.clock.now().toISOString(),
    {
      id,
      workspace_id: script.workspace_id,
      ...scriptJobTarget(script),
      parent_job: null,
      ...lineage,
      args,
      created_by: principal.username,
      created_scopes: scopeTexts(principal),
      delete_after_use: script.delete_after_use,
      ...(script.priority ? { priority: script.priority } : {}),
    },
    origin,
  );
  if (script.cache_ttl) {
    const cached = await answerFromCache(deps, job, script.cache_ttl);
    if (cached) return cached;
  }
  if (await startLimited(deps, job, script, 'script')) return job;
  const running = await insertRunningHere(deps, job, { callerWaits: wait.callerWaits ?? false, timeoutMs: runTimeoutMs(script, deps.config) });
  if (running) return running;
  await deps.store.insertJob(job);
  await deps.queue.enqueue(job);
  return job;
}

/**
 * A run of a script or flow with `concurrent_limit` is stored held, then takes its concurrency
 * slot or waits for one (core/jobs/concurrency.ts). False when the runnable has no limit.
 */
export async function startLimited(deps: Pick<CoreDeps, 'store' | 'clock' | 'queue'>, job: Job, settings: RunSettings, kind: 'script' | 'flow'): Promise<boolean> {
  const key = concurrencyKeyOf(settings, job.workspace_id, kind, job.script_path, job.args ?? {});
  if (!key || !settings.concurrent_limit) return false;
  const held: Job = { ...job, concurrency_key: key, held: true };
  await deps.store.insertJob(held);
  Object.assign(job, { concurrency_key: key, held: true });
  try {
    await takeSlotOrWait(deps, held, { limit: settings.concurrent_limit, window_s: settings.concurrency_time_window_s ?? 0 });
  } catch (e) {
    await withdrawHeld(deps, held, e);
    throw e;
  }
  return true;
}

/**
 * A run stored held that could not take its place under its key (the slots document could not be
 * written: lost races past the retries, a store error): no slot names it, so nothing would ever
 * let it go, and it would show `queued` for good while its caller was told it failed. It is
 * canceled, saying why; one a slot let go meanwhile (no longer held) is left to run.
 */
async function withdrawHeld(deps: Pick<CoreDeps, 'store' | 'clock' | 'queue'>, job: Job, cause: unknown): Promise<void> {
  try {
    const stored = await deps.store.getJob(job.workspace_id, job.id);
    if (stored?.status !== 'queued' || !stored.held) return;
    const why = cause instanceof ApiError ? cause.message : 'the store could not record it';
    const result = { error: { name: 'Canceled', message: `withdrawn: the run could not wait for a slot of its concurrency key (${why})` } };
    await deps.store.completeJob(job.id, { status: 'canceled', result, logs: '' }, deps.clock.now().toISOString());
    await leaveSlot(deps, job);
  } catch {
    // The caller hears the first error; a run left held is what it was before this.
  }
}

/**
 * Where a worker of this process is free (JobQueue.reserve), stores the job already running and
 * hands it over: one commit fewer than queued-then-claimed. Null when there is none: the caller
 * stores and queues it as usual. Stored before it runs, so a crash still finds it and runs it again.
 */
export async function insertRunningHere(deps: Pick<CoreDeps, 'store' | 'queue' | 'clock'>, job: Job, intent: RunIntent): Promise<Job | null> {
  const reserved = await reserveHere(deps, job, intent);
  if (!reserved) return null;
  const { running, slot } = reserved;
  try {
    await deps.store.insertJob(running);
  } catch (e) {
    slot.cancel();
    throw e;
  }
  slot.run(running);
  return running;
}

/**
 * A worker of this process held for `job` (JobQueue.reserve), and the job as it is to be stored for
 * it: running. Null when none is free. The caller stores it, then runs it on the slot (or cancels).
 */
export async function reserveHere(deps: Pick<CoreDeps, 'queue' | 'clock'>, job: Job, intent: RunIntent): Promise<{ running: Job; slot: JobSlot } | null> {
  const slot = await deps.queue.reserve?.(job, intent);
  if (!slot) return null;
  // Now, not created_at: a caller may have waited for the worker (JobQueue.reserve).
  return { running: { ...job, status: 'running', started_at: deps.clock.now().toISOString(), attempts: 1 }, slot };
}

/** What a job started by `principal` may do: the scopes of its token, kept as text on the job. */
export function scopeTexts(principal: Principal): string[] | null {
  return principal.scopes ? principal.scopes.map((s) => s.text) : null;
}

export async function getJob(deps: CoreDeps, workspaceId: string, id: string): Promise<Job> {
  return (await deps.store.getJob(workspaceId, id)) ?? fail(id);
}

export function syncTimeout(jobId: string, maxWaitMs: number, workspaceId: string): ApiError {
  return new ApiError(
    504,
    'sync_wait_timeout',
    `job ${jobId} did not finish within the instance's maximum sync wait of ${maxWaitMs / 1000}s; it keeps running: poll /api/w/${workspaceId}/jobs_u/get/${jobId}`,
    { job_id: jobId },
  );
}

/** A job the caller may see (its creator, or anyone who may read its script); 404 when missing or hidden from them. */
export async function getVisibleJob(deps: CoreDeps, rights: Rights, id: string, verb: 'read' | 'cancel' = 'read'): Promise<Job> {
  const job = (await deps.store.getJob(rights.workspaceId, id)) ?? fail(id);
  // A job the caller may not read answers as an unknown id; one they may read but not cancel is a 403.
  if (!rights.canJob(job, 'read')) fail(id);
  rights.checkJob(job, verb);
  return job;
}

/** The newest jobs the caller may see. */
export async function listJobs(deps: CoreDeps, rights: Rights, filter: Omit<JobListFilter, 'workspace_id'>): Promise<Job[]> {
  rights.check('jobs', 'read');
  const jobs = await deps.store.listJobs({ ...filter, workspace_id: rights.workspaceId });
  return jobs.filter((j) => rights.canJob(j, 'read'));
}

/** The shape the API returns for a job. */
export function jobView(job: Job): JobView {
  return {
    id: job.id,
    workspace_id: job.workspace_id,
    type: isFinished(job.status) ? 'CompletedJob' : 'QueuedJob',
    status: job.status,
    running: job.status === 'running',
    success: job.success,
    result: job.result,
    args: job.args,
    logs: job.logs,
    job_kind: job.kind,
    parent_job: job.parent_job,
    script_path: job.script_path,
    script_hash: legacyScriptHash(job),
    flow_version: job.flow_version,
    flow_module: job.flow_module,
    language: job.language,
    created_by: job.created_by,
    schedule_path: job.schedule_path ?? null,
    trigger: job.trigger ?? null,
    created_at: job.created_at,
    started_at: job.started_at,
    completed_at: job.completed_at,
    attempts: job.attempts,
    deleted: job.deleted,
    cache_hit: job.cache_hit ?? false,
    priority: job.priority ?? 0,
    ...(job.concurrency_key ? { concurrency_key: job.concurrency_key } : {}),
    ...(job.started_by_job ? { started_by_job: job.started_by_job } : {}),
    ...(typeof job.run_depth === 'number' ? { run_depth: job.run_depth } : {}),
    ...(job.status === 'queued' && job.held ? { waiting_for_concurrency_slot: true } : {}),
  };
}

function fail(id: string): never {
  throw notFound(`job ${id}`);
}

/** The `error` of a failed job's result (`{ error: { name, message } }`), else the result itself. */
export function errorOf(result: unknown): unknown {
  return result !== null && typeof result === 'object' && 'error' in result ? result.error : result;
}
