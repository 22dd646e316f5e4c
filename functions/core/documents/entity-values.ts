import { z } from 'zod';
import { jsonObject, stringMap } from './json-maps.js';
import { flowModule, flowValue } from '../flows/definition.js';
import { inputSchemaRecord, jobRecord, scriptVersionRecord } from './records.js';
import type { EntityKind, ScriptVersion } from '../../ports.js';
import type { Folder, Group, Invite, Member, OutboxEntry } from '../identity/identity-documents.js';
import type { AppHead, AppVersion, Resource, ResourceType, Variable } from '../workspace/workspace-documents.js';
import type { FlowRunDocument, FlowVersion } from '../flows/flow-documents.js';
import { scheduleValue, type Schedule } from '../triggers/schedule-document.js';
import { httpRouteIndexValue, httpTriggerValue, routePrefixValue, type HttpRouteIndex, type HttpTrigger, type RoutePrefix } from '../triggers/http-trigger-document.js';

/**
 * One schema per kind of workspace document (the Store's entities). The core reads and writes
 * entities only through core/store/entities.ts, which parses every value with its kind's schema, so both
 * shells (and any Store) hold the same documents and the core never casts stored JSON.
 */

const timestamp = z.string().min(1);

/** The head of a flow path: its latest version id. */
export interface FlowHead {
  path: string;
  version: number;
  /** Archived flows leave the listing (unless asked for) but keep their versions and URLs. */
  archived?: boolean;
}

/** A workspace's sync key, sealed by the instance's SecretCipher (core/workspace/sync-key.ts). */
export interface SealedSyncKey {
  sealed: string;
}

/** An instance counter (core/store/sequences.ts). */
export interface Sequence {
  last: number;
}

/**
 * The AWS flow runner's record of a flow execution's wait: how often it was woken, and the task
 * token it waits on (adapters/aws/step-functions-flow-runner.ts).
 */
export interface FlowWait {
  wakes: number;
  token: string | null;
}

/** Wrong passwords counted against an account or a client address (core/identity/login-throttle.ts). */
export interface LoginCounter {
  failures: number;
  window_start: string;
  locked_until: string | null;
}

/** Where a scope's events go (`webhook`, core/events/webhook-settings.ts): a workspace's webhook or the instance events webhook. */
export interface WebhookSetting {
  url: string;
  /** The sealed Standard Webhooks secret; null: requests go unsigned. */
  secret: string | null;
  updated_by: string;
}

/** A workspace's chat connection (core/chat/chat-settings.ts), its secrets sealed. */
export const chatConnectionSetting = z.discriminatedUnion('platform', [
  z.object({ platform: z.literal('slack'), bot_token: z.string().min(1), signing_secret: z.string().min(1), api_url: z.string().min(1), updated_by: z.string() }),
  z.object({
    platform: z.literal('teams'),
    app_id: z.string().min(1),
    app_password: z.string().min(1),
    team_id: z.string().min(1),
    team_name: z.string().min(1),
    service_url: z.string().min(1),
    token_url: z.string().min(1),
    openid_metadata_url: z.string().min(1),
    updated_by: z.string(),
  }),
]);
export type ChatConnectionSetting = z.infer<typeof chatConnectionSetting>;

/** One line of the instance's audit log: what happened, when, and its non-secret details. */
export type AuditEntry = { event: string; at: string } & Record<string, unknown>;

const positiveLimit = z.number().int().positive().max(2 ** 31);
/**
 * A workspace's own job limits (README: Job confinement). Each may lower the instance's limit,
 * never raise it: the runtime takes the lower of the two. Absent fields follow the instance.
 */
export const jobLimitsSetting = z
  .object({ memory_mb: positiveLimit, max_processes: positiveLimit, cpu_seconds: positiveLimit, file_mb: positiveLimit, open_files: positiveLimit, disk_mb: positiveLimit })
  .partial()
  .strict();
export type JobLimitsSetting = z.infer<typeof jobLimitsSetting>;

/**
 * How long and how many finished jobs a workspace keeps with their arguments, logs and results
 * (README: Console, Retention); null keeps them. A field left out keeps its current value.
 */
export const RETENTION_MAX_COUNT = 100_000;
const retentionFields = z
  .object({
    max_age_days: z.number().int().positive().max(36_500).nullable().optional(),
    // Bounded: each pass counts this many newest finished jobs to find where pruning starts.
    max_count: z.number().int().positive().max(RETENTION_MAX_COUNT).nullable().optional(),
  })
  .strict();
export const retentionInput = retentionFields.refine((v) => v.max_age_days !== undefined || v.max_count !== undefined, 'give max_age_days, max_count or both');
const jobPosition = z.object({ created_at: z.string(), id: z.string() });
/** As stored: the setting, and where a pruning walk cut short by its budget goes on, per status. */
export const retentionSetting = retentionFields.extend({ resume: z.partialRecord(z.enum(['success', 'failed', 'canceled']), jobPosition).optional() });
export type RetentionSetting = z.infer<typeof retentionSetting>;

/** The workspace error handler (core/workspace/workspace-error-handler.ts), run as the admin who set it. */
export const errorHandlerSetting = z.object({
  path: z.string().min(1),
  extra_args: z.record(z.string(), z.unknown()),
  permissioned_as: z.string().min(1),
  permissioned_scopes: z.array(z.string()).nullable(),
  /** Runs that failed since then and found no handler run are given one by the sweep (unset: set on its next pass). */
  sweep_from: z.string().optional(),
});
export type ErrorHandlerSetting = z.infer<typeof errorHandlerSetting>;

/** A run answered from the result cache (core/jobs/result-cache.ts). */
export interface CachedResultValue {
  result: unknown;
  job: string;
  expires_at: string;
}

/**
 * The runs counted under one concurrency key (core/jobs/concurrency.ts): those holding a slot (ended
 * ones still count until their time window is over) and those waiting for one, oldest first.
 */
export const concurrencySlots = z.object({
  limit: z.number().int().positive(),
  window_s: z.number().int().nonnegative(),
  holders: z.array(z.object({ job: z.string(), started_at: timestamp, ended_at: timestamp.optional() })),
  waiting: z.array(z.string()),
});
export type ConcurrencySlots = z.infer<typeof concurrencySlots>;

export interface EntityValues {
  member: Member;
  group: Group;
  folder: Folder;
  resource: Resource;
  resource_type: ResourceType;
  variable: Variable;
  flow: FlowHead;
  flow_version: FlowVersion;
  flow_run: FlowRunDocument;
  /** A large step result of a flow run, kept apart from its run (core/flows/results-apart.ts). */
  flow_result: { value: unknown };
  flow_wait: FlowWait;
  sequence: Sequence;
  notification: OutboxEntry;
  sync_key: SealedSyncKey;
  login_throttle: LoginCounter;
  audit: AuditEntry;
  job_limits: JobLimitsSetting;
  retention: RetentionSetting;
  error_handler: ErrorHandlerSetting;
  result_cache: CachedResultValue;
  concurrency_slots: ConcurrencySlots;
  webhook: WebhookSetting;
  chat_connection: ChatConnectionSetting;
  app: AppHead;
  app_version: AppVersion;
  invite: Invite;
  http_trigger: HttpTrigger;
  http_route: HttpRouteIndex;
  route_prefix: RoutePrefix;
  schedule: Schedule;
  /** The code of a test run from the script editor, kept until its job ends (core/scripts/script-preview.ts). */
  script_preview: ScriptVersion;
  /** Windmill's flow user state: values a flow run's steps share by key, kept with the run (core/runs/windmill-compat.ts). */
  flow_user_state: { states: Record<string, unknown> };
  /** A job's progress as it last set it (Windmill's setProgress; core/runs/windmill-compat.ts). */
  job_progress: { percent: number };
}

const approval = z.object({ resume_id: z.number().int(), approver: z.string(), payload: z.unknown(), at: timestamp, logged_in: z.boolean().optional() });

/**
 * Runs stored before a children step kept ids held each branch's or iteration's whole job record
 * (`jobs`): read in today's shape, none of them known to have ended, so the next turn looks.
 */
function upgradeLegacyChildren(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || (raw as { kind?: unknown }).kind !== 'children') return raw;
  const step = raw as { jobs?: unknown; ended?: unknown };
  if (step.ended !== undefined || !Array.isArray(step.jobs) || !step.jobs.every((j) => typeof j === 'object' && j !== null)) return raw;
  const jobs = step.jobs as { id?: unknown; created_at?: unknown }[];
  return { ...step, jobs: jobs.map((j) => j.id), created_at: jobs[0]?.created_at, ended: jobs.map(() => false) };
}

const flowStep = z.preprocess(upgradeLegacyChildren, z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('child'), module: z.string(), job: jobRecord }),
  z.object({
    kind: z.literal('children'),
    module: z.string(),
    // Empty when the run keeps them apart (lists_apart).
    jobs: z.array(z.string().min(1)),
    created_at: timestamp,
    parallel: z.boolean(),
    started: z.number().int().nonnegative(),
    ended: z.array(z.boolean()),
    skip_failures: z.array(z.boolean()),
    ended_before: z.number().int().nonnegative().optional(),
    skip_all: z.boolean().optional(),
  }),
  z.object({
    kind: z.literal('suspend'),
    module: z.string(),
    resume_job: z.string(),
    required: z.number().int().positive(),
    deadline: timestamp.nullable(),
    step_result: z.unknown(),
    groups: z.array(z.string()).optional(),
    pre_approvals: z.number().int().nonnegative().optional(),
  }),
  z.object({ kind: z.literal('gate'), module: z.string(), deadline: timestamp.nullable() }),
  z.object({ kind: z.literal('wait'), module: z.string(), until: timestamp, reason: z.enum(['retry', 'sleep']) }),
  z.object({ kind: z.literal('while'), module: z.string(), job: jobRecord, iteration: z.number().int().nonnegative(), results: z.array(z.unknown()), results_apart: stringMap.optional(), results_chars: z.number().int().nonnegative().optional() }),
]));

const stepAttempt = z.object({
  attempt: z.number().int().positive(),
  job: z.string().nullable(),
  status: z.enum(['success', 'failed']),
  at: timestamp,
  error: z.unknown().optional(),
  retry_at: timestamp.optional(),
});

const gateState = z.object({
  message: z.string(),
  deadline: timestamp.nullable(),
  deliveries: z.array(
    z.object({ channel: z.enum(['email', 'webhook', 'sns', 'chat']), target: z.string(), attempt: z.number().int().positive(), ok: z.boolean(), at: timestamp, error: z.string().optional() }),
  ),
  notices: z.enum(['pending', 'done']).optional(),
  decision: z.object({ decision: z.enum(['approved', 'rejected']), approver: z.string().nullable(), reason: z.string(), at: timestamp }).optional(),
});

const chatMessage = z.object({
  id: z.string(),
  platform: z.enum(['slack', 'teams']),
  connection: z.string(),
  channel: z.string(),
  requested_channel: z.string().optional(),
  ts: z.string().nullable(),
  target: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('step'), step_job: z.string(), resume_id: z.number().int().nonnegative() }),
    z.object({ kind: z.literal('gate'), module: z.string() }),
  ]),
  approver: z.string().nullable(),
  text: z.string(),
  default_args: z.record(z.string(), z.unknown()),
  enums: z.record(z.string(), z.array(z.string())),
  deliveries: z.array(z.object({ method: z.string(), ok: z.boolean(), at: timestamp, error: z.string().optional() })),
  decision: z.object({ decision: z.enum(['approved', 'rejected']), by: z.string(), at: timestamp, reason: z.string().optional() }).optional(),
});

const flowRun: z.ZodType<FlowRunDocument> = z.object({
  flow_job: z.string(),
  version: z.number().int().positive(),
  path: z.string(),
  modules: z.array(flowModule).optional(),
  modules_at: z.string().regex(/^value\.(modules|failure_module)(\.[A-Za-z0-9_]+)*$/).optional(),
  flow_input: jsonObject,
  input_from: z.object({ job: z.string().min(1), keys: z.array(z.string()) }).optional(),
  outer_results: jsonObject.optional(),
  outer_from: z.string().min(1).optional(),
  results: jsonObject,
  results_apart: stringMap.optional(),
  previous_result: z.unknown(),
  previous_apart: z.string().min(1).optional(),
  input_apart: z.string().min(1).optional(),
  lists_apart: z.object({ jobs: z.string().min(1).optional(), child_jobs: stringMap.optional() }).optional(),
  apart_written: z.array(z.string().min(1)).optional(),
  resume: z.unknown(),
  resumes: z.array(z.unknown()),
  approvers: z.array(z.string()),
  index: z.number().int().nonnegative(),
  step: flowStep.nullable(),
  status: z.enum(['running', 'suspended', 'awaiting_approval', 'finished']),
  events: z.record(
    z.string(),
    z.object({
      approvals: z.array(approval),
      cancel: z.object({ by: z.string(), reason: z.string(), at: timestamp }).optional(),
      timed_out: z.boolean().optional(),
      resumed: z.boolean().optional(),
    }),
  ),
  gates: z.record(z.string(), gateState).optional(),
  consumed: z.array(z.number().int()).optional(),
  chat: z.array(chatMessage).optional(),
  step_modules: stringMap,
  child_jobs: z.record(z.string(), z.array(z.string())).optional(),
  early_return: z.string().optional(),
  early_result: z.object({ value: z.unknown() }).optional(),
  same_worker: z.boolean().optional(),
  shared_folder: z.string().optional(),
  jobs_counted_on: z.string().min(1).optional(),
  jobs_reserved: z.number().int().min(0).optional(),
  stopped_early: z.string().optional(),
  attempts: z.record(z.string(), z.array(stepAttempt)).optional(),
  skipped: z.array(z.string()).optional(),
  stop: z.object({ module: z.string(), skipped: z.boolean(), error_message: z.string().optional() }).optional(),
  failure_module: flowModule.optional(),
  failure: z.object({ result: z.unknown(), step_id: z.string(), started: z.boolean(), status: z.enum(['failed', 'canceled']).optional() }).optional(),
  cache_hits: stringMap.optional(),
  step_timeouts: z.record(z.string(), z.number().positive()).optional(),
  outcome: z.object({ status: z.enum(['success', 'failed', 'canceled']), result: z.unknown() }).optional(),
});

/** A resource as stored and as `resources/update` answers it; core/views/item-views.ts adds its times. */
export const resourceValue = z.object({ path: z.string().min(1), resource_type: z.string(), value: z.unknown(), description: z.string(), created_by: z.string() });

/** A variable as stored (a secret's value is its ciphertext); core/views/item-views.ts describes the answers from it. */
export const variableValue = z.object({ path: z.string().min(1), value: z.string(), is_secret: z.boolean(), description: z.string(), created_by: z.string() });

/** One version of an app, as stored and as the API answers it. */
export const appVersionValue = z.object({
  id: z.number().int().positive(),
  path: z.string().min(1),
  summary: z.string(),
  value: z.record(z.string(), z.unknown()),
  policy: z.record(z.string(), z.unknown()).nullable(),
  deployment_message: z.string().optional(),
  created_by: z.string(),
  created_at: timestamp,
});

/** Spelled out as a mapped type so that `ENTITY_VALUES[kind]` has the schema of exactly that kind. */
export const ENTITY_VALUES: { [K in EntityKind]: z.ZodType<EntityValues[K]> } = {
  member: z.object({ username: z.string().min(1), role: z.enum(['admin', 'developer', 'operator']), added_by: z.string() }),
  group: z.object({ name: z.string().min(1), summary: z.string(), members: z.array(z.string()) }),
  folder: z.object({
    name: z.string().min(1),
    summary: z.string(),
    owners: z.array(z.string()),
    extra_perms: z.record(z.string(), z.boolean()),
    created_by: z.string(),
  }),
  resource: resourceValue,
  resource_type: z.object({ name: z.string().min(1), schema: z.record(z.string(), z.unknown()), description: z.string(), builtin: z.boolean() }),
  variable: variableValue,
  flow: z.object({ path: z.string().min(1), version: z.number().int().positive(), archived: z.boolean().optional() }),
  flow_version: z.object({
    id: z.number().int().positive(),
    path: z.string().min(1),
    summary: z.string(),
    description: z.string(),
    value: flowValue,
    schema: inputSchemaRecord.nullable(),
    deployment_message: z.string().optional(),
    created_by: z.string(),
    created_at: timestamp,
    preview: z.literal(true).optional(),
    step_locks: z.record(z.string(), z.string()).optional(),
  }),
  flow_run: flowRun,
  flow_result: z.object({ value: z.unknown() }),
  flow_wait: z.object({ wakes: z.number().int().nonnegative(), token: z.string().nullable() }),
  sequence: z.object({ last: z.number().int().positive() }),
  notification: z.object({ id: z.string(), subject: z.string(), text: z.string(), created_at: timestamp }),
  sync_key: z.object({ sealed: z.string().min(1) }),
  login_throttle: z.object({ failures: z.number().int().nonnegative(), window_start: timestamp, locked_until: timestamp.nullable() }),
  audit: z.object({ event: z.string().min(1), at: timestamp }).catchall(z.unknown()),
  job_limits: jobLimitsSetting,
  retention: retentionSetting,
  error_handler: errorHandlerSetting,
  result_cache: z.object({ result: z.unknown(), job: z.string(), expires_at: timestamp }),
  concurrency_slots: concurrencySlots,
  webhook: z.object({ url: z.string(), secret: z.string().nullable(), updated_by: z.string() }),
  chat_connection: chatConnectionSetting,
  app: z.object({ path: z.string().min(1), version: z.number().int().positive() }),
  invite: z.object({ username: z.string().min(1), role: z.enum(['admin', 'developer', 'operator']), invited_by: z.string(), invited_at: timestamp }),
  app_version: appVersionValue,
  http_trigger: httpTriggerValue,
  http_route: httpRouteIndexValue,
  route_prefix: routePrefixValue,
  schedule: scheduleValue,
  script_preview: scriptVersionRecord,
  flow_user_state: z.object({ states: z.record(z.string(), z.unknown()) }),
  job_progress: z.object({ percent: z.number().int().min(0).max(100) }),
};
