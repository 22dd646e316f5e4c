import { parseStoredRunSettings, storedRunSettings } from '../../core/jobs/run-settings.js';
import { parseStored, parseStoredJson, StoredDocumentError } from '../../core/documents/parse.js';
import { jobRecord, scriptVersionRecord, tokenRecord, userRecord, workspaceRecord } from '../../core/documents/records.js';
import { FINISHED_STATUSES, type Job, type ScriptVersion, type TokenRecord, type User, type Workspace } from '../../ports.js';
import { gsi1, gsi2, gsi3, gsi4, keys, TTL_ATTRIBUTE, type ItemType } from './dynamo-keys.js';

/**
 * Translation between the port's records and table items. Free-form JSON (job args and results,
 * input schemas) is stored as a JSON string: DynamoDB maps do not keep key order (a schema's
 * `properties` order is the parameter order) and its number type rejects values JSON accepts.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Item = Record<string, any>;

/**
 * DynamoDB refuses items over 400 KB. With a BlobStore, large args, results, logs, streams and
 * script contents go to S3 with a reference in the item (dynamo-offload.ts); without one, writes
 * that would come near the limit fail with this error instead of a bare ValidationException.
 */
export const MAX_PAYLOAD_BYTES = 350 * 1024;

export class ItemTooLargeError extends Error {
  /** `detail` says how big it is, e.g. "is 512 KB, more than the 350 KB ...". */
  constructor(what: string, detail: string) {
    super(`${what} ${detail}; large payloads go to S3 only when the DynamoDB store has a BlobStore`);
    this.name = 'ItemTooLargeError';
  }
}

export function assertFits(what: string, ...parts: (string | null)[]): void {
  const bytes = parts.reduce((sum, p) => sum + (p === null ? 0 : Buffer.byteLength(p, 'utf8')), 0);
  if (bytes > MAX_PAYLOAD_BYTES) {
    throw new ItemTooLargeError(what, `is ${Math.ceil(bytes / 1024)} KB, more than the ${MAX_PAYLOAD_BYTES / 1024} KB the DynamoDB store keeps in one item`);
  }
}

/**
 * A list attribute the store keeps for itself (chunk lists, reference lists, a string set), read
 * without trusting the item: anything but strings is a StoredDocumentError naming item and attribute.
 */
export function stringList(item: Item, name: string): string[] {
  const value: unknown = item[name];
  if (value === undefined || value === null) return [];
  const list: unknown[] | null = value instanceof Set ? [...value] : Array.isArray(value) ? value : null;
  if (list?.every((s): s is string => typeof s === 'string')) return list;
  throw new StoredDocumentError(`item ${String(item.pk)} ${String(item.sk)}`, name, 'not a list of strings');
}

export function entity(type: ItemType) {
  return { entity: type };
}

export function workspaceItem(ws: Workspace): Item {
  return {
    ...keys.workspace(ws.id),
    ...gsi1.workspace(ws.id),
    ...entity('workspace'),
    id: ws.id,
    name: ws.name,
    created_at: ws.created_at,
    object_storage_enabled: ws.object_storage_enabled,
  };
}

export function toWorkspace(i: Item): Workspace {
  return parseStored(workspaceRecord, { id: i.id, name: i.name, created_at: i.created_at, object_storage_enabled: i.object_storage_enabled }, `workspace ${i.id}`);
}

/**
 * Where a version's content, schema and dependency lock are: inline (`content`, `schema_json`,
 * `lock`) or in the BlobStore (`content_ref`, `schema_ref`, `lock_ref`), one of each pair (a
 * version without a lock has `lock: null`). A lock that resolution writes is npm's
 * `package-lock.json` of the whole tree, hundreds of KB for a large one: never bounded by the API.
 */
export type ScriptPayload = ({ content: string } | { content_ref: string }) &
  ({ schema_json: string } | { schema_ref: string }) &
  ({ lock: string | null } | { lock_ref: string });
const SCRIPT_PAYLOAD_ATTRIBUTES = ['content', 'content_ref', 'schema_json', 'schema_ref', 'lock', 'lock_ref'];

/** The version's own attributes, shared by the immutable version item and the path's head copy. */
function scriptAttributes(v: ScriptVersion, payload: ScriptPayload): Item {
  return {
    workspace_id: v.workspace_id,
    path: v.path,
    hash: v.hash,
    parent_hash: v.parent_hash,
    ...payload,
    language: v.language,
    summary: v.summary,
    description: v.description,
    delete_after_use: v.delete_after_use,
    timeout: v.timeout,
    deployment_message: v.deployment_message ?? null,
    run_settings: storedRunSettings(v),
    created_by: v.created_by,
    created_at: v.created_at,
  };
}

/**
 * The update that makes a path's head a full copy of `v` (so a run by path is one GetItem) and adds
 * `v.hash` to the set of every hash at the path, which deleting the path needs without reading an
 * eventually consistent index. The previous head's payload attributes `v` does not use go. The
 * caller adds the race condition.
 */
export function scriptHeadUpdate(v: ScriptVersion, payload: ScriptPayload) {
  const attributes = scriptAttributes(v, payload);
  const names = ['entity', ...Object.keys(attributes)];
  const removed = SCRIPT_PAYLOAD_ATTRIBUTES.filter((n) => !(n in attributes));
  const values: Item = { entity: 'script_head', ...attributes };
  return {
    UpdateExpression: `SET ${names.map((n) => `#${n} = :${n}`).join(', ')} ADD version_hashes :hashes${removed.length ? ` REMOVE ${removed.map((n) => `#${n}`).join(', ')}` : ''}`,
    ExpressionAttributeNames: Object.fromEntries([...names, ...removed].map((n) => [`#${n}`, n])) as Record<string, string>,
    ExpressionAttributeValues: { ':hashes': new Set([v.hash]), ...Object.fromEntries(names.map((n) => [`:${n}`, values[n]])) } as Item,
  };
}

export function scriptVersionItem(v: ScriptVersion, payload: ScriptPayload): Item {
  return { ...keys.scriptVersion(v.workspace_id, v.hash), ...entity('script_version'), ...scriptAttributes(v, payload) };
}

export function toScript(i: Item): ScriptVersion {
  const what = `script version ${i.hash}`;
  return parseStored(
    scriptVersionRecord,
    {
      workspace_id: i.workspace_id,
      path: i.path,
      hash: i.hash,
      parent_hash: i.parent_hash,
      content: i.content,
      language: i.language,
      summary: i.summary,
      description: i.description,
      schema: parseStoredJson(i.schema_json, what, 'schema'),
      delete_after_use: i.delete_after_use,
      timeout: i.timeout,
      ...(typeof i.deployment_message === 'string' ? { deployment_message: i.deployment_message } : {}),
      ...(typeof i.lock === 'string' ? { lock: i.lock } : {}),
      ...parseStoredRunSettings(i.run_settings),
      created_by: i.created_by,
      created_at: i.created_at,
    },
    what,
  );
}

/**
 * A job's args, result, logs and stream as the item stores them. Logs and the result stream are
 * lists of chunks: DynamoDB update expressions cannot concatenate strings, but `list_append`
 * appends atomically and in order. Offloaded parts are `args_ref`, `result_ref`, `logs_ref` and
 * `stream_refs` (the stream's earlier segments, in order) instead; `stream_bytes` counts the
 * inline stream and `stream_seq` every change to it (see appendJobStream).
 */
export interface JobPayload {
  args_json?: string | null;
  args_ref?: string;
  result_json?: string;
  result_ref?: string;
  log_chunks: string[];
  logs_ref?: string;
  stream_chunks: string[];
  stream_refs: string[];
  stream_bytes: number;
  stream_seq: number;
}

export function jobItem(job: Job, payload: JobPayload): Item {
  return {
    ...keys.job(job.id),
    ...gsi1.job(job.workspace_id, job.created_at, job.id),
    ...(FINISHED_STATUSES.includes(job.status) ? {} : gsi2.job(job.status, job.created_at, job.id)),
    // A flow's running-flows entry (gsi3): the partition always, the sort key while it runs.
    ...(job.kind === 'flow' ? { gsi3pk: gsi3.runningFlowsOf(job.workspace_id, job.id) } : {}),
    ...(job.kind === 'flow' && job.status === 'running' ? { gsi3sk: gsi3.sortKey(job.created_at, job.id) } : {}),
    // A queued job's entry in the workspace's queued jobs (gsi4), until it leaves `queued`.
    ...(job.status === 'queued' ? { gsi4sk: gsi4.sortKey(job.created_at, job.id) } : {}),
    ...entity('job'),
    id: job.id,
    workspace_id: job.workspace_id,
    kind: job.kind,
    parent_job: job.parent_job,
    ...(job.started_by_job ? { started_by_job: job.started_by_job } : {}),
    ...(typeof job.run_depth === 'number' ? { run_depth: job.run_depth } : {}),
    script_path: job.script_path,
    script_hash: job.script_hash,
    flow_version: job.flow_version,
    flow_module: job.flow_module,
    language: job.language,
    status: job.status,
    created_by: job.created_by,
    ...(job.created_scopes ? { created_scopes: job.created_scopes } : {}),
    ...(job.schedule_path ? { schedule_path: job.schedule_path } : {}),
    ...(job.trigger ? { trigger: job.trigger } : {}),
    created_at: job.created_at,
    started_at: job.started_at,
    completed_at: job.completed_at,
    success: job.success,
    ...payload,
    streaming: job.streaming,
    attempts: job.attempts,
    delete_after_use: job.delete_after_use,
    deleted: job.deleted,
    ...(job.cache_hit ? { cache_hit: true } : {}),
    ...(job.priority ? { priority: job.priority } : {}),
    ...(job.concurrency_key ? { concurrency_key: job.concurrency_key } : {}),
    ...(job.held ? { held: true } : {}),
  };
}

/** An item whose references were resolved (Offload.resolveJob) as a Job. */
export function toJob(i: Item): Job {
  const what = `job ${i.id}`;
  return parseStored(
    jobRecord,
    {
      id: i.id,
      workspace_id: i.workspace_id,
      kind: i.kind,
      parent_job: i.parent_job ?? null,
      ...(i.started_by_job ? { started_by_job: i.started_by_job } : {}),
      ...(typeof i.run_depth === 'number' ? { run_depth: i.run_depth } : {}),
      script_path: i.script_path,
      // Items from before flow_version existed lack it: the schema reads them in today's shape.
      script_hash: i.script_hash,
      flow_version: i.flow_version,
      flow_module: i.flow_module,
      language: i.language,
      args: i.args_json === null ? null : parseStoredJson(i.args_json, what, 'args'),
      status: i.status,
      created_by: i.created_by,
      ...(i.created_scopes ? { created_scopes: i.created_scopes } : {}),
      ...(i.schedule_path ? { schedule_path: i.schedule_path } : {}),
      ...(i.trigger ? { trigger: i.trigger } : {}),
      created_at: i.created_at,
      started_at: i.started_at,
      completed_at: i.completed_at,
      success: i.success,
      result: parseStoredJson(i.result_json, what, 'result'),
      logs: stringList(i, 'log_chunks').join(''),
      result_stream: stringList(i, 'stream_chunks').join(''),
      streaming: i.streaming,
      attempts: i.attempts,
      delete_after_use: i.delete_after_use,
      deleted: i.deleted,
      ...(i.cache_hit === true ? { cache_hit: true } : {}),
      ...(typeof i.priority === 'number' && i.priority ? { priority: i.priority } : {}),
      ...(typeof i.concurrency_key === 'string' ? { concurrency_key: i.concurrency_key } : {}),
      ...(i.held === true ? { held: true } : {}),
    },
    what,
  );
}

export function userItem(u: User): Item {
  return {
    ...keys.user(u.username),
    ...gsi1.user(u.username),
    ...entity('user'),
    username: u.username,
    email: u.email,
    is_admin: u.is_admin,
    password_hash: u.password_hash,
    created_at: u.created_at,
  };
}

export function toUser(i: Item): User {
  return parseStored(userRecord, { username: i.username, email: i.email, is_admin: i.is_admin, password_hash: i.password_hash, created_at: i.created_at }, `user ${i.username}`);
}

export function tokenItem(t: TokenRecord): Item {
  return {
    ...keys.token(t.token_hash),
    ...gsi1.token(t.owner, t.created_at, t.token_hash),
    ...entity('token'),
    token_hash: t.token_hash,
    prefix: t.prefix,
    label: t.label,
    owner: t.owner,
    kind: t.kind,
    workspace_id: t.workspace_id,
    // A list keeps the scopes' order; null (all permissions) stays distinct from [] (none).
    scopes: t.scopes,
    expires_at: t.expires_at,
    created_at: t.created_at,
    expiry_notice_at: t.expiry_notice_at ?? null,
    ...ttl(t.expires_at),
  };
}

/**
 * Expired tokens are refused at once and deleted by the core's sweep, which tells their owners
 * (spec 3). DynamoDB's TTL only clears up after it, a week later, should the sweep not run.
 */
const TTL_GRACE_SECONDS = 7 * 24 * 3600;

function ttl(expiresAt: string | null): Item {
  const ms = expiresAt === null ? NaN : Date.parse(expiresAt);
  return Number.isFinite(ms) ? { [TTL_ATTRIBUTE]: Math.ceil(ms / 1000) + TTL_GRACE_SECONDS } : {};
}

export function toToken(i: Item): TokenRecord {
  return parseStored(
    tokenRecord,
    {
      token_hash: i.token_hash,
      prefix: i.prefix,
      label: i.label,
      owner: i.owner,
      kind: i.kind,
      workspace_id: i.workspace_id,
      scopes: i.scopes,
      expires_at: i.expires_at,
      created_at: i.created_at,
      expiry_notice_at: i.expiry_notice_at ?? null,
    },
    `token ${i.prefix}`,
  );
}
