import { parseStored, parseStoredJson } from '../../core/documents/parse.js';
import { deliveryRecord, entityRecord, jobRecord, scriptVersionRecord, tokenRecord, userRecord, workspaceRecord } from '../../core/documents/records.js';
import { parseStoredRunSettings } from '../../core/jobs/run-settings.js';
import type { Delivery, Entity, Job, ScriptVersion, TokenRecord, User, Workspace } from '../../ports.js';

/** SQLite rows of the local store (sqlite-store.ts) to records and back. */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Row = Record<string, any>;

// Rows become records through the shared schemas (core/documents): a row that does not match is
// a StoredDocumentError naming it, not a malformed record handed to the core.

export function toDelivery(r: Row): Delivery {
  return parseStored(deliveryRecord, parseStoredJson(r.record, 'delivery', 'record'), 'delivery');
}

export function toWorkspace(r: Row): Workspace {
  return parseStored(workspaceRecord, { id: r.id, name: r.name, created_at: r.created_at, object_storage_enabled: r.object_storage_enabled === 1 }, `workspace ${r.id}`);
}

export function toScript(r: Row): ScriptVersion {
  const what = `script version ${r.hash}`;
  return parseStored(
    scriptVersionRecord,
    {
      workspace_id: r.workspace_id,
      path: r.path,
      hash: r.hash,
      parent_hash: r.parent_hash,
      content: r.content,
      language: r.language,
      summary: r.summary,
      description: r.description,
      schema: parseStoredJson(r.schema, what, 'schema'),
      delete_after_use: r.delete_after_use === 1,
      timeout: r.timeout,
      ...(r.deployment_message === null ? {} : { deployment_message: r.deployment_message }),
      ...(r.lock === null ? {} : { lock: r.lock }),
      ...parseStoredRunSettings(r.run_settings),
      created_by: r.created_by,
      created_at: r.created_at,
    },
    what,
  );
}

export function toJob(r: Row): Job {
  const what = `job ${r.id}`;
  return parseStored(
    jobRecord,
    {
      id: r.id,
      workspace_id: r.workspace_id,
      kind: r.kind,
      parent_job: r.parent_job ?? null,
      ...(r.started_by_job ? { started_by_job: r.started_by_job } : {}),
      ...(r.run_depth !== null && r.run_depth !== undefined ? { run_depth: r.run_depth } : {}),
      script_path: r.script_path,
      script_hash: r.script_hash,
      flow_version: r.flow_version,
      flow_module: r.flow_module,
      language: r.language,
      args: r.args === null ? null : parseStoredJson(r.args, what, 'args'),
      status: r.status,
      created_by: r.created_by,
      ...(r.created_scopes === null ? {} : { created_scopes: parseStoredJson(r.created_scopes, what, 'created_scopes') }),
      ...(r.schedule_path ? { schedule_path: r.schedule_path } : {}),
      ...(r.trigger_kind ? { trigger: r.trigger_kind } : {}),
      created_at: r.created_at,
      started_at: r.started_at,
      completed_at: r.completed_at,
      success: r.success === null ? null : r.success === 1,
      result: r.result === null ? null : parseStoredJson(r.result, what, 'result'),
      logs: r.logs,
      result_stream: r.result_stream,
      streaming: r.streaming === 1,
      attempts: r.attempts,
      delete_after_use: r.delete_after_use === 1,
      deleted: r.deleted === 1,
      ...(r.cache_hit === 1 ? { cache_hit: true } : {}),
      ...(r.priority ? { priority: r.priority } : {}),
      ...(r.concurrency_key ? { concurrency_key: r.concurrency_key } : {}),
      ...(r.held === 1 ? { held: true } : {}),
    },
    what,
  );
}

export function userRow(u: User): Row {
  const valid = parseStored(userRecord, u, `user ${u.username}`);
  return { ...valid, is_admin: valid.is_admin ? 1 : 0 };
}

export function toUser(r: Row): User {
  return parseStored(
    userRecord,
    { username: r.username, email: r.email, is_admin: r.is_admin === 1, password_hash: r.password_hash, created_at: r.created_at },
    `user ${r.username}`,
  );
}

export function toToken(r: Row): TokenRecord {
  const what = `token ${r.prefix}`;
  return parseStored(
    tokenRecord,
    {
      token_hash: r.token_hash,
      prefix: r.prefix,
      label: r.label,
      owner: r.owner,
      kind: r.kind,
      workspace_id: r.workspace_id,
      scopes: r.scopes === null ? null : parseStoredJson(r.scopes, what, 'scopes'),
      expires_at: r.expires_at,
      created_at: r.created_at,
      expiry_notice_at: r.expiry_notice_at ?? null,
    },
    what,
  );
}

export function entityRow(e: Entity): Row {
  const valid = parseStored(entityRecord, e, `${e.kind} ${e.key}`);
  return { ...valid, value: JSON.stringify(valid.value) };
}

export function toEntity(r: Row): Entity {
  const what = `${r.kind} ${r.key}`;
  return parseStored(
    entityRecord,
    {
      kind: r.kind,
      workspace_id: r.workspace_id,
      key: r.key,
      value: parseStoredJson(r.value, what, 'value'),
      version: r.version,
      created_at: r.created_at,
      updated_at: r.updated_at,
    },
    what,
  );
}

/**
 * A new job's columns and values, in one list so that the statement's order and the values' cannot
 * part. Bound by position: better-sqlite3 binds 23 named parameters ~2 us slower per insert.
 */
const JOB_COLUMNS: [string, (job: Job) => unknown][] = [
  ['id', (j) => j.id],
  ['workspace_id', (j) => j.workspace_id],
  ['kind', (j) => j.kind],
  ['script_path', (j) => j.script_path],
  ['script_hash', (j) => j.script_hash],
  ['flow_version', (j) => j.flow_version],
  ['flow_module', (j) => j.flow_module],
  ['language', (j) => j.language],
  ['args', (j) => JSON.stringify(j.args)],
  ['status', (j) => j.status],
  ['created_by', (j) => j.created_by],
  ['created_scopes', (j) => (j.created_scopes ? JSON.stringify(j.created_scopes) : null)],
  ['schedule_path', (j) => j.schedule_path ?? null],
  ['trigger_kind', (j) => j.trigger ?? null],
  ['created_at', (j) => j.created_at],
  ['delete_after_use', (j) => (j.delete_after_use ? 1 : 0)],
  ['parent_job', (j) => j.parent_job],
  ['started_by_job', (j) => j.started_by_job ?? null],
  ['run_depth', (j) => j.run_depth ?? null],
  ['started_at', (j) => j.started_at],
  ['attempts', (j) => j.attempts],
  ['priority', (j) => j.priority ?? 0],
  ['concurrency_key', (j) => j.concurrency_key ?? null],
  ['held', (j) => (j.held ? 1 : 0)],
  ['cache_hit', (j) => (j.cache_hit ? 1 : 0)],
];
export const INSERT_JOB = `INSERT INTO jobs (${JOB_COLUMNS.map(([column]) => column).join(', ')}) VALUES (${JOB_COLUMNS.map(() => '?').join(', ')})`;

/** A new job's values for INSERT_JOB, in its columns' order. */
export function jobInsertValues(job: Job): unknown[] {
  return JOB_COLUMNS.map(([, value]) => value(job));
}
