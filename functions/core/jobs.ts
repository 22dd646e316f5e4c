import { ApiError, notFound, conflict } from './errors.js';
import { newUuid } from './crypto.js';
import { FINISHED_STATUSES, type Job, type JobListFilter, type JobStatus, type ScriptVersion } from '../ports.js';
import type { CoreDeps } from './deps.js';
import type { Principal } from './auth.js';
import type { Rights } from './permissions.js';
import { cancelFlowSteps } from './flows/advance.js';

/** Creating, finding, waiting for and cancelling jobs. Running them is the worker's part. */

export type RunTarget = { by: 'path'; path: string } | { by: 'hash'; hash: string };

/** The signal a running job's worker listens on, apart from the job's own updates. */
export function cancelSignal(jobId: string): string {
  return `cancel:${jobId}`;
}

export function isFinished(status: JobStatus): boolean {
  return FINISHED_STATUSES.includes(status);
}

/** The script version to run, once the caller is known to be allowed to run it. */
export async function resolveTarget(deps: CoreDeps, rights: Rights, target: RunTarget): Promise<ScriptVersion> {
  // By path, the check comes first so a caller without rights cannot probe which paths exist.
  if (target.by === 'path') rights.check('jobs', 'run', target.path);
  const script =
    target.by === 'path'
      ? await deps.store.getLatestScript(rights.workspaceId, target.path)
      : await deps.store.getScriptByHash(rights.workspaceId, target.hash);
  if (!script) throw notFound(target.by === 'path' ? `script ${target.path}` : `script version ${target.hash}`);
  rights.check('jobs', 'run', script.path);
  return script;
}

/** A new job in `queued`, with nothing run yet. */
export function queuedJob(
  createdAt: string,
  fields: Pick<Job, 'workspace_id' | 'kind' | 'parent_job' | 'script_path' | 'script_hash' | 'language' | 'args' | 'created_by'> & Partial<Pick<Job, 'id' | 'delete_after_use' | 'created_scopes'>>,
): Job {
  return {
    id: newUuid(),
    delete_after_use: false,
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
}

/** Stores the job before anyone learns its id, then hands it to the queue: nothing accepted is lost. */
export async function pushJob(
  deps: CoreDeps,
  principal: Principal,
  script: ScriptVersion,
  args: Record<string, unknown>,
  id: string = newUuid(),
): Promise<Job> {
  const job = queuedJob(deps.clock.now().toISOString(), {
    id,
    workspace_id: script.workspace_id,
    kind: 'script',
    parent_job: null,
    script_path: script.path,
    script_hash: script.hash,
    language: script.language,
    args,
    created_by: principal.username,
    created_scopes: scopeTexts(principal),
    delete_after_use: script.delete_after_use,
  });
  await deps.store.insertJob(job);
  await deps.queue.enqueue(job);
  return job;
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

export async function cancelJob(deps: CoreDeps, rights: Rights, id: string, reason: string | undefined): Promise<Job> {
  const job = await getVisibleJob(deps, rights, id, 'cancel');
  const principal = rights.principal;
  const workspaceId = rights.workspaceId;
  if (isFinished(job.status)) throw conflict(`job ${id} already finished as ${job.status}`);
  const message = `canceled by ${principal.username}${reason ? `: ${reason}` : ''}`;
  const won = await deps.store.completeJob(
    id,
    { status: 'canceled', result: { error: { name: 'Canceled', message } }, logs: job.logs },
    deps.clock.now().toISOString(),
  );
  if (!won) throw conflict(`job ${id} finished before it could be canceled`);
  deps.signals.notify(id);
  deps.signals.notify(cancelSignal(id));
  // A cancelled flow stops its steps; a cancelled step lets its flow fail or go on.
  if (job.kind === 'flow') {
    await cancelFlowSteps(deps, workspaceId, job.id);
    await deps.flows.wake(workspaceId, job.id);
  }
  if (job.parent_job) await deps.flows.wake(workspaceId, job.parent_job);
  return getJob(deps, workspaceId, id);
}

/** A job the caller may see (its creator, or anyone who may read its script); 404 when missing. */
export async function getVisibleJob(deps: CoreDeps, rights: Rights, id: string, verb: 'read' | 'cancel' = 'read'): Promise<Job> {
  const job = await getJob(deps, rights.workspaceId, id);
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
export function jobView(job: Job) {
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
    script_hash: job.script_hash,
    language: job.language,
    created_by: job.created_by,
    created_at: job.created_at,
    started_at: job.started_at,
    completed_at: job.completed_at,
    attempts: job.attempts,
    deleted: job.deleted,
  };
}

function fail(id: string): never {
  throw notFound(`job ${id}`);
}
