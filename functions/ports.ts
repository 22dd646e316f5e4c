/**
 * The interfaces the core needs from a shell. The local shell implements them with SQLite, an
 * in-process worker pool and child processes; the AWS shell with DynamoDB, SQS, S3 and Lambda.
 * Everything here is async so that either shell fits behind the same signatures.
 */

export type Language = 'bun' | 'deno' | 'nativets' | 'python3' | 'bash';
export const LANGUAGES: readonly Language[] = ['bun', 'deno', 'nativets', 'python3', 'bash'];

export type JobStatus = 'queued' | 'running' | 'suspended' | 'awaiting_approval' | 'success' | 'failed' | 'canceled';
export const FINISHED_STATUSES: readonly JobStatus[] = ['success', 'failed', 'canceled'];

/** JSON Schema object describing a script's inputs; `properties` keys are in parameter order. */
export interface InputSchema {
  $schema?: string;
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  order?: string[];
}

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
  created_by: string;
  created_at: string;
}

export interface JobError {
  name: string;
  message: string;
  stack?: string;
}

export interface Job {
  id: string;
  workspace_id: string;
  kind: 'script';
  script_path: string;
  script_hash: string;
  language: Language;
  args: Record<string, unknown> | null;
  status: JobStatus;
  created_by: string;
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
  is_admin: boolean;
  created_at: string;
}

export interface TokenRecord {
  token_hash: string;
  /** First characters of the token, for listing without revealing it. */
  prefix: string;
  label: string;
  owner: string;
  /** Null for an instance token; a workspace id limits the token to that workspace. */
  workspace_id: string | null;
  expires_at: string | null;
  created_at: string;
}

export interface JobListFilter {
  workspace_id: string;
  status?: JobStatus;
  script_path?: string;
  limit: number;
}

/** Durable state: workspaces, script versions, jobs, tokens. */
export interface Store {
  createWorkspace(ws: Workspace): Promise<'created' | 'exists'>;
  getWorkspace(id: string): Promise<Workspace | null>;
  listWorkspaces(): Promise<Workspace[]>;
  setObjectStorage(id: string, enabled: boolean): Promise<void>;

  /**
   * Inserts a new version, atomically checking that `expectedLatest` is still the path's latest
   * hash (null: the path must be free). Returns false when another version won the race.
   */
  insertScriptVersion(v: ScriptVersion, expectedLatest: string | null): Promise<boolean>;
  getLatestScript(workspaceId: string, path: string): Promise<ScriptVersion | null>;
  getScriptByHash(workspaceId: string, hash: string): Promise<ScriptVersion | null>;
  listLatestScripts(workspaceId: string): Promise<ScriptVersion[]>;
  /** Deletes every version at the path; returns how many were removed. */
  deleteScriptPath(workspaceId: string, path: string): Promise<number>;

  insertJob(job: Job): Promise<void>;
  getJob(workspaceId: string, id: string): Promise<Job | null>;
  listJobs(filter: JobListFilter): Promise<Job[]>;
  /**
   * queued -> running, returning the job when this caller won it. A job still `running` after its
   * lease (`leaseUntil` of the previous claim) ran out lost its worker (a crashed or timed-out
   * Lambda) and may be claimed again: that is how a redelivered message finishes it.
   */
  claimJob(id: string, startedAt: string, leaseUntil: string): Promise<Job | null>;
  appendJobStream(id: string, chunk: string): Promise<void>;
  /** running|queued -> finished, only if not finished already; returns false when it was. */
  completeJob(id: string, completion: JobCompletion, completedAt: string): Promise<boolean>;
  /** Irreversibly removes args, result, logs and stream of a job. */
  scrubJob(id: string): Promise<void>;
  /** Jobs left `running` by a crashed process go back to `queued` (at-least-once). */
  requeueInterrupted(): Promise<string[]>;

  /** Inserts the user unless one with that username exists; returns whether it was created. */
  createUser(u: User): Promise<boolean>;
  getUser(username: string): Promise<User | null>;

  /** Inserts or replaces the token with this hash. */
  putToken(t: TokenRecord): Promise<void>;
  getToken(tokenHash: string): Promise<TokenRecord | null>;
  deleteToken(tokenHash: string): Promise<void>;
}

/** Hands accepted jobs to workers (local: queue table + pool; AWS: SQS). */
export interface JobQueue {
  enqueue(job: Job): Promise<void>;
}

/**
 * Wakes up whoever waits on a job (sync endpoints, SSE streams). Local: an in-process emitter;
 * AWS: a poll interval. `wait` resolves on the next change or after `ms`, whichever is first.
 */
export interface JobSignals {
  notify(jobId: string): void;
  wait(jobId: string, ms: number): Promise<void>;
}

/** Object storage for multipart uploads (local: files under the data dir; AWS: S3). */
export interface BlobStore {
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
  get(key: string): Promise<Uint8Array | null>;
}

/** Runs user code in a sandbox. */
export interface RunRequest {
  jobId: string;
  workspaceId: string;
  language: Language;
  /** Identifies the code version: warm processes are reused only for the same workspace and hash. */
  scriptHash: string;
  content: string;
  /** Arguments by parameter name; the runner passes those named in `schema` to `main`. */
  args: Record<string, unknown>;
  schema: InputSchema;
  /** The only environment the user code sees (OV_TOKEN, OV_WORKSPACE, BASE_INTERNAL_URL, OV_JOB_ID). */
  env: Record<string, string>;
  timeoutMs: number;
  maxOutputBytes: number;
}

export interface RunHooks {
  /** A chunk yielded by a generator `main`, in order. */
  onStream(chunk: string): void;
  /** Output the user code wrote (stdout/stderr), in order. */
  onLog(text: string): void;
}

export type RunOutcome =
  | { ok: true; result: unknown; streamed: boolean }
  | { ok: false; error: JobError };

export interface CodeRunner {
  run(req: RunRequest, hooks: RunHooks, signal: AbortSignal): Promise<RunOutcome>;
  close(): Promise<void>;
}

export interface Clock {
  now(): Date;
}
