import { z } from 'zod';
import { jsonObject } from './json-maps.js';
import { ENTITY_KINDS, JOB_TRIGGERS, LANGUAGES, type JobTrigger, type Delivery, type Entity, type EntityStamp, type InputSchema, type OutboxEvent, type Job, type ScriptVersion, type TokenRecord, type User, type Workspace } from '../../ports.js';

/**
 * The schemas of the Store's records (ports.ts): each store builds a candidate from its row or
 * item and parses it with these, on read and before a write, in both shells.
 */

const language = z.enum(LANGUAGES);
/** A job's status; a store reading it alone (Store.getJobStatus) checks it with this. */
export const jobStatus = z.enum(['queued', 'running', 'suspended', 'awaiting_approval', 'success', 'failed', 'canceled']);
const timestamp = z.string().min(1);

export const workspaceRecord: z.ZodType<Workspace> = z.object({
  id: z.string().min(1),
  name: z.string(),
  created_at: timestamp,
  object_storage_enabled: z.boolean(),
});

/** JSON Schema is open-ended: keys beyond these are kept as they are. */
export const inputSchemaRecord: z.ZodType<InputSchema> = z.looseObject({
  $schema: z.string().optional(),
  type: z.literal('object'),
  properties: z.record(z.string(), z.record(z.string(), z.unknown())),
  required: z.array(z.string()),
  order: z.array(z.string()).optional(),
});

/** A script version's fields; the API answers them as they are (`scripts/get`), or without `content` (`scripts/list`). */
export const scriptVersionFields = z.object({
  workspace_id: z.string().min(1),
  path: z.string().min(1),
  hash: z.string().min(1),
  parent_hash: z.string().nullable(),
  content: z.string(),
  language,
  summary: z.string(),
  description: z.string(),
  schema: inputSchemaRecord,
  delete_after_use: z.boolean(),
  timeout: z.number().int().positive().nullable(),
  deployment_message: z.string().optional(),
  lock: z.string().optional(),
  cache_ttl: z.number().int().positive().optional(),
  concurrent_limit: z.number().int().positive().optional(),
  concurrency_time_window_s: z.number().int().nonnegative().optional(),
  concurrency_key: z.string().optional(),
  priority: z.number().int().optional(),
  created_by: z.string(),
  created_at: timestamp,
});
export const scriptVersionRecord: z.ZodType<ScriptVersion> = scriptVersionFields;

const jobFields = {
  id: z.string().min(1),
  workspace_id: z.string().min(1),
  parent_job: z.string().nullable(),
  started_by_job: z.string().nullable().optional(),
  run_depth: z.number().int().nonnegative().nullable().optional(),
  script_path: z.string(),
  language,
  args: jsonObject.nullable(),
  status: jobStatus,
  created_by: z.string(),
  // The scopes of the token that started the job; absent or null: the starter's full rights.
  created_scopes: z.array(z.string()).nullable().optional(),
  schedule_path: z.string().nullable().optional(),
  trigger: z.enum(JOB_TRIGGERS as [JobTrigger, ...JobTrigger[]]).nullable().optional(),
  created_at: timestamp,
  started_at: timestamp.nullable(),
  completed_at: timestamp.nullable(),
  success: z.boolean().nullable(),
  result: z.unknown(),
  logs: z.string(),
  result_stream: z.string(),
  streaming: z.boolean(),
  attempts: z.number().int().nonnegative(),
  delete_after_use: z.boolean(),
  deleted: z.boolean(),
  cache_hit: z.boolean().optional(),
  priority: z.number().int().nullable().optional(),
  concurrency_key: z.string().nullable().optional(),
  held: z.boolean().optional(),
};

const flowVersionId = z.number().int().positive();

/** What a job runs decides which of script_hash, flow_version and flow_module it has. */
const typedJob = z.discriminatedUnion('kind', [
  z.object({ ...jobFields, kind: z.literal('script'), script_hash: z.string().min(1), flow_version: z.null(), flow_module: z.null() }),
  z.object({ ...jobFields, kind: z.literal('flow'), script_hash: z.null(), flow_version: flowVersionId, flow_module: z.null() }),
  z.object({ ...jobFields, kind: z.literal('flowstep'), script_hash: z.null(), flow_version: flowVersionId, flow_module: z.string().min(1) }),
]);

export const jobRecord: z.ZodType<Job> = z.preprocess(upgradeLegacyTarget, typedJob);

/**
 * Jobs stored before they had `flow_version` (DynamoDB items, jobs inside stored flow runs) packed
 * the flow version into `script_hash`: `<version>` for a flow, `<version>:<module>` for an inline
 * step. They are read in today's shape; SQLite rows were migrated instead (sqlite-schema.ts).
 */
function upgradeLegacyTarget(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  // Today's shape, nearly every job parsed: returned as it is, not copied (a copy of a job's ~30
  // fields cost most of a job's parse).
  const job = raw as Record<string, unknown>;
  if (job.flow_version !== undefined) return raw;
  if (job.kind === 'script') return { ...job, flow_version: null, flow_module: null };
  const [version, module] = String(job.script_hash).split(':');
  return { ...job, script_hash: null, flow_version: Number(version), flow_module: job.kind === 'flowstep' ? (module ?? null) : null };
}

/** A user's fields; the API answers them without `password_hash` (`users/whoami`, `users/list`). */
export const userFields = z.object({
  username: z.string().min(1),
  email: z.string(),
  is_admin: z.boolean(),
  password_hash: z.string().nullable(),
  created_at: timestamp,
});
export const userRecord: z.ZodType<User> = userFields;

export const tokenRecord: z.ZodType<TokenRecord> = z.object({
  token_hash: z.string().min(1),
  prefix: z.string(),
  label: z.string(),
  owner: z.string().min(1),
  kind: z.enum(['api', 'session']),
  workspace_id: z.string().nullable(),
  scopes: z.array(z.string()).nullable(),
  expires_at: timestamp.nullable(),
  created_at: timestamp,
  expiry_notice_at: timestamp.nullable().optional(),
});

/** The envelope of a workspace document; its value is parsed by kind in the core (entity-values.ts). */
export const entityRecord: z.ZodType<Entity> = z.object({
  kind: z.enum(ENTITY_KINDS),
  workspace_id: z.string().min(1),
  key: z.string().min(1),
  value: jsonObject,
  version: z.number().int().positive(),
  created_at: timestamp,
  updated_at: timestamp,
});

/** Which write of an entity is stored (ports.ts: EntityStamp). */
export const entityStamp: z.ZodType<EntityStamp> = z.object({
  version: z.number().int().positive(),
  created_at: timestamp,
  updated_at: timestamp,
});

/** A webhook delivery (ports.ts: Delivery), as both shells store it. */
export const deliveryRecord: z.ZodType<Delivery> = z.object({
  id: z.string().min(1),
  scope: z.string().min(1),
  item: z.string().min(1),
  type: z.string().min(1),
  body: z.string(),
  created_at: timestamp,
  status: z.enum(['pending', 'delivered', 'failed']),
  attempt_count: z.number().int().nonnegative(),
  attempts: z.array(z.object({ at: timestamp, status_code: z.number().int().nullable(), error: z.string().nullable() })),
  next_attempt_at: timestamp.nullable(),
  version: z.number().int().positive(),
});

/** What a recorded event becomes: a delivery not yet attempted, due at once. */
export function newDelivery(e: OutboxEvent): Delivery {
  return { ...e, status: 'pending', attempt_count: 0, attempts: [], next_attempt_at: null, version: 1 };
}
