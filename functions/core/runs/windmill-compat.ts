import { z } from 'zod';
import { getEntityValue, listEntityValues, readEntity, tryCreateEntity, tryReplaceEntity } from '../store/entities.js';
import { ApiError, badRequest, conflict, notFound } from '../common/errors.js';
import { parseBody } from '../common/validation.js';
import { AGAIN, RACE, retry } from '../common/retry.js';
import { getVisibleJob, isFinished, listJobs } from '../jobs/jobs.js';
import { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import type { Job, JobStatus } from '../../ports.js';
import type { WorkspaceUserView } from '../views/identity-views.js';
import { rootJob } from './job-lineage.js';

/**
 * The answers Windmill's client libraries expect where svc's own API has none of the same shape.
 * Each reads through the same permission checks as svc's own routes (docs/windmill.md).
 */

/** `variables/exists`: whether the variable is there, for a caller who may read that path. */
export async function variableExists(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<boolean> {
  rights.check('variables', 'read', path);
  return (await getEntityValue(deps.store, 'variable', rights.workspaceId, path)) !== null;
}

/** `resources/exists`: the same for a resource. */
export async function resourceExists(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<boolean> {
  rights.check('resources', 'read', path);
  return (await getEntityValue(deps.store, 'resource', rights.workspaceId, path)) !== null;
}

export interface ResultMaybe {
  completed: boolean;
  started: boolean;
  success: boolean | null;
  /** The result once completed (`{error}` for a failed job), null before. */
  result: unknown;
}

/** `jobs_u/completed/get_result_maybe`: what waitJob polls, for a job the caller may see. */
export async function jobResultMaybe(deps: CoreDeps, rights: Rights, id: string): Promise<ResultMaybe> {
  const job = await getVisibleJob(deps, rights, id);
  const completed = isFinished(job.status);
  return {
    completed,
    started: job.started_at !== null || completed,
    success: completed ? job.status === 'success' : null,
    // A failed or canceled job's result is `{error}`, which the clients read when success is false.
    result: completed ? job.result : null,
  };
}

/** The outermost flow job above a job (the job itself outside a flow), as Windmill's get_root_job_id. */
export async function rootJobId(deps: CoreDeps, rights: Rights, id: string): Promise<string> {
  const job = await getVisibleJob(deps, rights, id);
  return (await rootJob(deps.store, job.workspace_id, job)).id;
}

/** What a flow run's user state may hold in all, as JSON: one stored document. */
export const MAX_FLOW_USER_STATE_CHARS = 128 * 1024;

/**
 * The flow run whose user state a client names (Windmill's `setFlowUserState`/`getFlowUserState`
 * name the root flow job): one the caller may see, and for a write one they may also cancel.
 */
async function userStateFlow(deps: CoreDeps, rights: Rights, id: string, key: string, verb: 'read' | 'cancel') {
  const job = await getVisibleJob(deps, rights, id, verb);
  if (job.kind !== 'flow') throw badRequest('invalid_request', `job ${id} is not a flow job: a flow user state belongs to a flow run`);
  if (key.length === 0 || key.length > 255 || key in Object.prototype) throw badRequest('invalid_request', 'key: 1 to 255 characters, not a name every JavaScript object has', { field: 'key' });
  return job;
}

/** `jobs/flow/user_states/<flow job>/<key>` (GET): the value set under the key in this run, null when none was. */
export async function getFlowUserState(deps: CoreDeps, rights: Rights, id: string, key: string): Promise<unknown> {
  const job = await userStateFlow(deps, rights, id, key, 'read');
  const doc = await getEntityValue(deps.store, 'flow_user_state', job.workspace_id, job.id);
  return doc && Object.hasOwn(doc.states, key) ? doc.states[key] : null;
}

/** `jobs/flow/user_states/<flow job>/<key>` (POST): sets the key's value for the run; removed with the run's payloads. */
export async function setFlowUserState(deps: CoreDeps, rights: Rights, id: string, key: string, value: unknown): Promise<void> {
  const job = await userStateFlow(deps, rights, id, key, 'cancel');
  await retry({ attempts: 5, ...RACE, exhausted: () => conflict(`the user state of flow ${id} is being changed by someone else; retry`) }, async () => {
    const current = await readEntity(deps.store, 'flow_user_state', job.workspace_id, job.id);
    const states: Record<string, unknown> = { ...current?.value.states };
    Object.defineProperty(states, key, { value: value ?? null, enumerable: true, writable: true, configurable: true });
    if (JSON.stringify(states).length > MAX_FLOW_USER_STATE_CHARS) {
      throw new ApiError(413, 'value_too_large', `a flow run's user state holds at most ${MAX_FLOW_USER_STATE_CHARS} characters of JSON in all`);
    }
    const stored = current
      ? await tryReplaceEntity(deps.store, deps.clock, current, { states })
      : await tryCreateEntity(deps.store, deps.clock, 'flow_user_state', job.workspace_id, job.id, { states });
    return stored ? true : AGAIN;
  });
}

/** `job_metrics/set_progress/<job>` `{percent}`: the progress a running job reports, for a caller who may cancel it. */
export async function setJobProgress(deps: CoreDeps, rights: Rights, id: string, percent: number): Promise<void> {
  const job = await getVisibleJob(deps, rights, id, 'cancel');
  await retry({ attempts: 5, ...RACE, exhausted: () => conflict(`the progress of job ${id} is being changed by someone else; retry`) }, async () => {
    const current = await readEntity(deps.store, 'job_progress', job.workspace_id, job.id);
    const stored = current
      ? await tryReplaceEntity(deps.store, deps.clock, current, { percent })
      : await tryCreateEntity(deps.store, deps.clock, 'job_progress', job.workspace_id, job.id, { percent });
    return stored ? true : AGAIN;
  });
}

/** `job_metrics/get_progress/<job>`: the last progress the job set, null when it set none. */
export async function getJobProgress(deps: CoreDeps, rights: Rights, id: string): Promise<number | null> {
  const job = await getVisibleJob(deps, rights, id);
  return (await getEntityValue(deps.store, 'job_progress', job.workspace_id, job.id))?.percent ?? null;
}

/** `scripts/exists/p`: whether a script is at the path, for a caller who may read that path. */
export async function scriptExists(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<boolean> {
  rights.check('scripts', 'read', path);
  return (await deps.store.getLatestScript(rights.workspaceId, path)) !== null;
}

/** `flows/exists`: the same for a flow (an archived one too, as Windmill answers). */
export async function flowExists(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<boolean> {
  rights.check('flows', 'read', path);
  return (await getEntityValue(deps.store, 'flow', rights.workspaceId, path)) !== null;
}

/**
 * The names Windmill's `list_paths` and `listnames` routes answer: those of svc's own lists (the
 * same permission checks and filters), sorted, as plain strings.
 */
export async function namesOf<T>(list: Promise<T[]>, name: (item: T) => string): Promise<string[]> {
  return (await list).map(name).sort();
}

/** `scripts/deployment_status/h`: svc locks a script's imports when it is created, so a stored version is deployed. */
export async function scriptDeploymentStatus(deps: Pick<CoreDeps, 'store'>, rights: Rights, hash: string): Promise<{ lock: string | null; lock_error_logs: null }> {
  const script = await deps.store.getScriptByHash(rights.workspaceId, hash);
  // A version the caller may not read answers as an unknown hash, as scripts/get/h does.
  if (!script || !rights.can('scripts', 'read', script.path)) throw notFound(`script version ${hash}`);
  return { lock: script.lock ?? null, lock_error_logs: null };
}

/** `jobs_u/completed/get`: a job that has ended; one still queued or running is not found among the completed. */
export async function completedJob(deps: CoreDeps, rights: Rights, id: string): Promise<Job> {
  const job = await getVisibleJob(deps, rights, id);
  if (!isFinished(job.status)) throw new ApiError(404, 'not_completed', `job ${job.id} has not completed yet (${job.status})`);
  return job;
}

/** `jobs_u/get_logs`: a job's logs as text (empty once deleted after use). */
export async function jobLogs(deps: CoreDeps, rights: Rights, id: string): Promise<string> {
  return (await getVisibleJob(deps, rights, id)).logs;
}

/** A member of the workspace and their user; an unknown username and a non-member are both 404. */
async function memberUser(deps: Pick<CoreDeps, 'store'>, rights: Rights, username: string) {
  rights.check('users', 'read');
  const member = await getEntityValue(deps.store, 'member', rights.workspaceId, username);
  const user = member && (await deps.store.getUser(username));
  if (!user) throw notFound(`member ${username} of workspace ${rights.workspaceId}`);
  return user;
}

/** `users/username_to_email` (the clients' usernameToEmail): a member's email, for anyone who may list the members. */
export async function memberEmail(deps: Pick<CoreDeps, 'store'>, rights: Rights, username: string): Promise<string> {
  return (await memberUser(deps, rights, username)).email;
}

/** `users/whois` and `users/get` (Windmill's User): another member as whoami shows them to themselves, with their own rights. */
export async function workspaceMember(deps: Pick<CoreDeps, 'store'>, rights: Rights, username: string): Promise<WorkspaceUserView> {
  const user = await memberUser(deps, rights, username);
  return workspaceWhoami(deps, await Rights.ofUser(deps, user, rights.workspaceId));
}

/** `users/whoami` of a workspace (Windmill's User): the caller, their role here, groups and folder rights. */
export async function workspaceWhoami(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<WorkspaceUserView> {
  const username = rights.principal.username;
  const user = await deps.store.getUser(username);
  if (!user) throw notFound(`user ${username}`);
  const [groups, folders] = await Promise.all([listEntityValues(deps.store, 'group', rights.workspaceId), listEntityValues(deps.store, 'folder', rights.workspaceId)]);
  const names = folders.map((f) => f.key).sort();
  const right = (folder: string) => rights.rightOn(`f/${folder}`);
  return {
    email: user.email,
    username,
    is_admin: rights.role === 'admin' || rights.role === 'instance_admin',
    is_super_admin: user.is_admin,
    created_at: user.created_at,
    operator: rights.role === 'operator',
    disabled: false,
    groups: groups.filter((g) => g.value.members.includes(username)).map((g) => g.key).sort(),
    folders: names.filter((f) => right(f) === 'owner' || right(f) === 'writer'),
    folders_read: names.filter((f) => right(f) !== null),
    folders_owners: names.filter((f) => right(f) === 'owner'),
  };
}


const booleanQuery = z.enum(['true', 'false']).optional();
/** `jobs/queue/list`: Windmill's queue is the jobs queued or running (`running=true|false` picks one). */
export const queueListQuery = z.strictObject({
  script_path_exact: z.string().optional(),
  running: booleanQuery,
  per_page: z.coerce.number().int().min(1).max(1000).default(1000),
});
/** `jobs/completed/list`: the jobs that ended (`success=true|false` picks the successes or the rest). */
export const completedListQuery = z.strictObject({
  script_path_exact: z.string().optional(),
  success: booleanQuery,
  per_page: z.coerce.number().int().min(1).max(1000).default(1000),
});

/** Windmill's queue or completed list: svc's job list for each status it covers, merged newest first. */
export async function windmillJobList(deps: CoreDeps, rights: Rights, which: 'queue' | 'completed', query: unknown): Promise<Job[]> {
  let statuses: JobStatus[];
  let q: { script_path_exact?: string; per_page: number };
  if (which === 'queue') {
    const input = parseBody(queueListQuery, query);
    statuses = input.running === undefined ? ['queued', 'running'] : input.running === 'true' ? ['running'] : ['queued'];
    q = input;
  } else {
    const input = parseBody(completedListQuery, query);
    statuses = input.success === undefined ? ['success', 'failed', 'canceled'] : input.success === 'true' ? ['success'] : ['failed', 'canceled'];
    q = input;
  }
  const lists = await Promise.all(statuses.map((status) => listJobs(deps, rights, { status, script_path: q.script_path_exact, limit: q.per_page })));
  return lists
    .flat()
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id))
    .slice(0, q.per_page);
}
