/**
 * What the store keeps: workspaces, script versions, jobs, users, tokens, entities, and the
 * filters and cursors jobs are listed by. The ports (../ports.ts) take and return these shapes.
 */

import type { InputSchema, JobError, Language } from './code-runner.js';

export type JobStatus = 'queued' | 'running' | 'suspended' | 'awaiting_approval' | 'success' | 'failed' | 'canceled';
export const FINISHED_STATUSES: readonly JobStatus[] = ['success', 'failed', 'canceled'];

export interface Workspace {
  id: string;
  name: string;
  created_at: string;
  /** Multipart uploads need object storage; off until an admin turns it on. */
  object_storage_enabled: boolean;
}

export interface ScriptVersion {
  workspace_id: string;
  path: string;
  hash: string;
  parent_hash: string | null;
  content: string;
  language: Language;
  summary: string;
  description: string;
  schema: InputSchema;
  /** Delete logs, arguments and result once a sync endpoint has returned the result (spec 4.4). */
  delete_after_use: boolean;
  /** Per-script timeout in seconds; null uses the instance default. */
  timeout: number | null;
  /** Why this version was made (a CLI push records svc.yaml's `message`); absent when none was given. */
  deployment_message?: string;
  /** The script's dependency lock as the CLI syncs it (`<path>.script.lock`); absent when it has none. */
  lock?: string;
  /** How its runs are scheduled and cached (core/jobs/run-settings.ts); each absent when not set. */
  cache_ttl?: number;
  concurrent_limit?: number;
  concurrency_time_window_s?: number;
  concurrency_key?: string;
  priority?: number;
  created_by: string;
  created_at: string;
}

export type JobKind = 'script' | 'flow' | 'flowstep';
export const JOB_KINDS: readonly JobKind[] = ['script', 'flow', 'flowstep'];

/**
 * What started a job: a webhook URL of spec 4.1 (`webhook`), a custom HTTP route (`route`), a
 * schedule, the CLI, the console's run form (`console`) or its re-run (`rerun`), a flow (`flow`:
 * its steps), or any other API entry point (`api`).
 */
export type JobTrigger = 'webhook' | 'route' | 'schedule' | 'cli' | 'console' | 'rerun' | 'flow' | 'api' | 'error_handler';
export const JOB_TRIGGERS: readonly JobTrigger[] = ['webhook', 'route', 'schedule', 'cli', 'console', 'rerun', 'flow', 'api', 'error_handler'];

export interface Job {
  id: string;
  workspace_id: string;
  /**
   * What the job runs. `script`: the script version `script_hash`; `flow`: a run of flow version
   * `flow_version` (`script_path` is the flow's path); `flowstep`: the inline script `flow_module`
   * of flow version `flow_version`. The fields a kind does not use are null.
   */
  kind: JobKind;
  /** The flow job this job is a step or sub-flow of. */
  parent_job: string | null;
  /**
   * The job whose job token (OV_TOKEN / WM_TOKEN) started this run through the API; absent on runs
   * anything else started. Windmill records it as `parent_job`; svc keeps `parent_job` for a flow's
   * own steps (a step's completion wakes its flow), so a run a script started is not a step.
   */
  started_by_job?: string | null;
  /**
   * How many jobs are above this one, counting the jobs that started it or the flows above it with
   * their job tokens and the flow jobs it or they are steps of; set on runs a job started (with
   * `started_by_job`), absent otherwise (core/runs/run-admission.ts).
   */
  run_depth?: number | null;
  script_path: string;
  script_hash: string | null;
  flow_version: number | null;
  flow_module: string | null;
  language: Language;
  args: Record<string, unknown> | null;
  status: JobStatus;
  created_by: string;
  /**
   * The scopes of the token that started the job (inherited by a flow's steps): its OV_TOKEN gets
   * exactly these, never the creator's full rights. Null or absent: the creator's own permissions.
   */
  created_scopes?: string[] | null;
  /** The schedule that started the job (its path), so the job list names it; absent otherwise. */
  schedule_path?: string | null;
  /** What started the job; absent on jobs stored before it was recorded. */
  trigger?: JobTrigger | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  success: boolean | null;
  result: unknown;
  logs: string;
  /** Text streamed so far by a generator script (spec 4.5). */
  result_stream: string;
  /** True once the job was seen producing a stream. */
  streaming: boolean;
  /** How many times a worker has started this job (at-least-once delivery re-runs it). */
  attempts: number;
  delete_after_use: boolean;
  /** Set once logs, args and result were scrubbed; never reversed. */
  deleted: boolean;
  /** Answered from the result cache (`cache_ttl`): finished without running. */
  cache_hit?: boolean;
  /** Higher runs first when workers are busy (the script's `priority`); absent: 0. */
  priority?: number | null;
  /** The concurrency slot key the job counts against (`concurrent_limit`); absent: none. */
  concurrency_key?: string | null;
  /** Queued but held back until a concurrency slot frees (core/jobs/concurrency.ts); no worker takes it. */
  held?: boolean;
}

/** What the core writes when a job leaves `running`. */
export interface JobCompletion {
  status: 'success' | 'failed' | 'canceled';
  result: unknown;
  logs: string;
}

export interface User {
  username: string;
  email: string;
  /** Instance administrator (superadmin): every workspace, users and instance settings. */
  is_admin: boolean;
  /** A self-describing password hash (`scrypt$...`); null when the user cannot log in with a password. */
  password_hash: string | null;
  created_at: string;
}

/**
 * An API token or a browser session, stored by the hash of its value. A token acts as its owner,
 * narrowed by `workspace_id` and `scopes` when set.
 */
export interface TokenRecord {
  token_hash: string;
  /** First characters of the token, for listing without revealing it. */
  prefix: string;
  label: string;
  owner: string;
  /** `session`: created by a password login and sent as a cookie; `api`: created explicitly. */
  kind: 'api' | 'session';
  /** Null: every workspace the owner belongs to; a workspace id limits the token to that workspace. */
  workspace_id: string | null;
  /** Null: all of the owner's permissions; otherwise only what one of these scopes allows. */
  scopes: string[] | null;
  expires_at: string | null;
  created_at: string;
  /** When its owner was told that it expires soon (spec 3, 5.8); null until then. */
  expiry_notice_at?: string | null;
}

/**
 * The workspace-scoped records that are documents rather than rows of their own: members, groups,
 * folders, resources, resource types and variables. `value` is the record's JSON; `version` starts
 * at 1 and grows by one with every replace, so read-modify-write updates cannot lose a change.
 */
export const ENTITY_KINDS = [
  'member',
  'group',
  'folder',
  'resource',
  'resource_type',
  'variable',
  'flow',
  'flow_version',
  'flow_run',
  'flow_result',
  'flow_wait',
  'sequence',
  'notification',
  'sync_key',
  'login_throttle',
  'audit',
  'job_limits',
  'webhook',
  'chat_connection',
  'app',
  'app_version',
  'invite',
  'http_trigger',
  'http_route',
  'route_prefix',
  'schedule',
  'retention',
  'error_handler',
  'result_cache',
  'concurrency_slots',
  'script_preview',
  'flow_user_state',
  'job_progress',
] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];

export interface Entity<T = Record<string, unknown>> {
  kind: EntityKind;
  workspace_id: string;
  /** A path (`u/alice/db`), a name (`ops`) or a username, unique per kind and workspace. */
  key: string;
  value: T;
  version: number;
  created_at: string;
  updated_at: string;
}

/** Which write of an entity is stored: its version and times, the same after the same write. */
export type EntityStamp = Pick<Entity, 'version' | 'created_at' | 'updated_at'>;

export interface JobListFilter {
  workspace_id: string;
  status?: JobStatus;
  script_path?: string;
  /** Only the runs this schedule started. */
  schedule_path?: string;
  /** Only jobs of this kind (a store may serve running flows from an index of their own). */
  kind?: JobKind;
  limit: number;
}

/**
 * The console's run list (Store.queryJobs): newest first by (created_at, id), every filter optional.
 * `args` and `result` match when each of their keys is in the job's JSON with an equal value,
 * recursively (a JSON subset); arrays must be equal.
 */
export interface JobQuery {
  workspace_id: string;
  /** Only jobs of exactly this path (f/a/b, never f/a/bc). */
  path?: string;
  path_prefix?: string;
  status?: JobStatus;
  kind?: JobKind;
  trigger?: JobTrigger;
  created_by?: string;
  /** Inclusive lower bound on created_at. */
  created_after?: string;
  /** Exclusive upper bound on created_at. */
  created_before?: string;
  args?: Record<string, unknown>;
  result?: Record<string, unknown>;
  /** The cursor: only jobs strictly older than this position in the order. */
  after?: JobPosition;
  limit: number;
}

/** A job's place in the newest-first order of the run list. */
export interface JobPosition {
  created_at: string;
  id: string;
}
