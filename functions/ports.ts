/**
 * The interfaces the core needs from a shell. The local shell implements them with SQLite, an
 * in-process worker pool and child processes; the AWS shell with DynamoDB, SQS, S3 and Lambda.
 * Everything here is async so that either shell fits behind the same signatures.
 */

import type { Entity, EntityKind, EntityStamp, Job, JobCompletion, JobListFilter, JobQuery, JobStatus, ScriptVersion, TokenRecord, User, Workspace } from './ports/records.js';
import type { Delivery, OutboxEvent } from './ports/webhooks.js';

// The ports too large to share this file live beside it; everyone imports them from here.
export * from './ports/code-runner.js';
export * from './ports/webhooks.js';
export * from './ports/blob-store.js';
export * from './ports/records.js';

/** Durable state: workspaces, script versions, jobs, tokens. */
export interface Store {
  createWorkspace(ws: Workspace): Promise<'created' | 'exists'>;
  getWorkspace(id: string): Promise<Workspace | null>;
  listWorkspaces(): Promise<Workspace[]>;
  /**
   * The workspaces that hold a `member` entity keyed by this username, ordered by id (a member
   * entity of a workspace that does not exist is left out): what a person's own listings read,
   * at a cost that follows their memberships, not the instance's workspaces. A removed member is
   * never listed; a member added a moment ago may be missing for that moment (AWS: an index).
   */
  listMemberWorkspaces(username: string): Promise<Workspace[]>;
  /**
   * The `invite` entities keyed by this username, in every workspace, ordered by workspace id:
   * a person's pending invitations, read as listMemberWorkspaces reads memberships.
   */
  listInvitesOf(username: string): Promise<Entity[]>;
  setObjectStorage(id: string, enabled: boolean): Promise<void>;

  /**
   * Inserts a new version, atomically checking that `expectedLatest` is still the path's latest
   * hash (null: the path must be free). Returns false when another version won the race.
   */
  insertScriptVersion(v: ScriptVersion, expectedLatest: string | null, events?: OutboxEvent[]): Promise<boolean>;
  getLatestScript(workspaceId: string, path: string): Promise<ScriptVersion | null>;
  getScriptByHash(workspaceId: string, hash: string): Promise<ScriptVersion | null>;
  listLatestScripts(workspaceId: string): Promise<ScriptVersion[]>;
  /** Deletes every version at the path; returns how many were removed. */
  deleteScriptPath(workspaceId: string, path: string, events?: OutboxEvent[]): Promise<number>;

  insertJob(job: Job): Promise<void>;
  getJob(workspaceId: string, id: string): Promise<Job | null>;
  /**
   * The job with this id in whichever workspace holds it (every store keys jobs by id alone): one
   * read. The caller must then decide whether the person may see that workspace's job.
   */
  findJobById(id: string): Promise<Job | null>;
  /** The job's status alone, or null when there is none: what a flow's next turn checks of its flow job (core/flows/run-cache.ts). */
  getJobStatus(workspaceId: string, id: string): Promise<JobStatus | null>;
  listJobs(filter: JobListFilter): Promise<Job[]>;
  /** The run list: up to `limit` jobs matching every filter given, newest first (see JobQuery). */
  queryJobs(query: JobQuery): Promise<Job[]>;
  /**
   * queued -> running, returning the job when this caller won it. A job still `running` after its
   * lease (`leaseUntil` of the previous claim) ran out lost its worker (a crashed or timed-out
   * Lambda) and may be claimed again: that is how a redelivered message finishes it. A `held`
   * job is never claimed.
   */
  claimJob(id: string, startedAt: string, leaseUntil: string): Promise<Job | null>;
  appendJobStream(id: string, chunk: string): Promise<void>;
  /** Appends live log text to a running job (dropped otherwise); completion then writes the full text. */
  appendJobLogs(id: string, chunk: string): Promise<void>;
  /** running|queued -> finished, only if not finished already; returns false when it was. */
  completeJob(id: string, completion: JobCompletion, completedAt: string): Promise<boolean>;
  /** Irreversibly removes args, result, logs and stream of a job. */
  scrubJob(id: string): Promise<void>;
  /** Lets a `held` queued job be taken by workers (its concurrency slot is free); false when it is no longer held and queued. */
  releaseHeldJob(id: string): Promise<boolean>;
  /** Jobs left `running` by a crashed process go back to `queued` (at-least-once). */
  requeueInterrupted(): Promise<string[]>;
  /**
   * Up to `limit` jobs of every workspace still in `status` since before `before`: for `queued`,
   * created before it; for `running`, started before it. Oldest first. What the reaper looks for.
   */
  listStaleJobs(status: 'queued' | 'running', before: string, limit: number): Promise<Job[]>;
  /**
   * How many jobs of the workspace are `queued` (held ones too), counted up to `atMost`: what a new
   * run's admission checks (core/jobs/run-admission.ts), so it reads at most that many index entries.
   */
  countQueuedJobs(workspaceId: string, atMost: number): Promise<number>;
  /**
   * Adds `count` to the jobs counted under job `id` (0 at first), atomically, unless the sum would
   * pass `limit`: the jobs a top-level run made in all, which its flow's turns count before they
   * store any (core/jobs/run-budget.ts). Answers whether it added; false, adding nothing, when the
   * sum would pass the limit. A negative `count` (giving back what a turn that stored nothing had
   * counted) is always added. The count is a small record of its own beside the job (not the job's
   * row or item, whose arguments would make every count a large write), kept as long as the job.
   */
  countRunJobs(id: string, count: number, limit: number): Promise<boolean>;

  /** Inserts the user unless one with that username exists; returns whether it was created. */
  createUser(u: User, events?: OutboxEvent[]): Promise<boolean>;
  getUser(username: string): Promise<User | null>;
  /** Every user, ordered by username. */
  listUsers(): Promise<User[]>;
  /** Replaces an existing user (same username); returns false when there is none. */
  updateUser(u: User): Promise<boolean>;

  /** Inserts or replaces the token with this hash. */
  putToken(t: TokenRecord): Promise<void>;
  getToken(tokenHash: string): Promise<TokenRecord | null>;
  /** The owner's tokens and sessions, ordered by created_at. Expired ones may still be listed. */
  listTokens(owner: string): Promise<TokenRecord[]>;
  deleteToken(tokenHash: string, events?: OutboxEvent[]): Promise<void>;
  /** Records that the owner was told the token expires soon; false (and nothing written) when the token is gone. */
  markTokenExpiryNotice(tokenHash: string, at: string, events?: OutboxEvent[]): Promise<boolean>;

  /**
   * Inserts the entity unless one with its kind, workspace and key exists; returns whether it did.
   * `jobs` are inserted (as insertJob does) only when it did: see replaceEntity.
   */
  createEntity(e: Entity, events?: OutboxEvent[], jobs?: Job[]): Promise<boolean>;
  /**
   * Replaces the entity if its stored version is still `expectedVersion` (the caller passes
   * `e.version = expectedVersion + 1`); returns false when it is missing or was changed meanwhile.
   * `jobs` are inserted (as insertJob does) only when it replaced it: the jobs a flow run's new
   * state names (its next steps). The local store writes them in the entity's transaction, one
   * commit for both; a store may insert them just after instead, since a run whose state names a
   * job the store lacks inserts it at its next turn (core/flows/advance.ts, `restart`).
   */
  replaceEntity(e: Entity, expectedVersion: number, events?: OutboxEvent[], jobs?: Job[]): Promise<boolean>;
  getEntity(kind: EntityKind, workspaceId: string, key: string): Promise<Entity | null>;
  /**
   * Which write of the entity is stored now, without its value: enough to tell whether a copy this
   * process holds (written by it) is still current, at the cost of a few fields rather than the
   * whole document (a flow run's next turn, core/flows/run-cache.ts).
   */
  getEntityStamp(kind: EntityKind, workspaceId: string, key: string): Promise<EntityStamp | null>;
  /** Every entity of the kind in the workspace, ordered by key. */
  listEntities(kind: EntityKind, workspaceId: string): Promise<Entity[]>;
  /** Returns whether there was one to delete. */
  deleteEntity(kind: EntityKind, workspaceId: string, key: string, events?: OutboxEvent[]): Promise<boolean>;

  /** Records events that belong to no other write (a redelivery is a replace, not this). */
  insertDeliveries(events: OutboxEvent[]): Promise<void>;
  /** Undelivered events, oldest first (ids sort by creation), whether due yet or not. */
  listPendingDeliveries(limit: number): Promise<Delivery[]>;
  getDelivery(scope: string, id: string): Promise<Delivery | null>;
  /** The scope's deliveries, newest first. */
  listDeliveries(scope: string, limit: number): Promise<Delivery[]>;
  /** Replaces the delivery if its stored version is still `expectedVersion`; false otherwise. */
  replaceDelivery(d: Delivery, expectedVersion: number): Promise<boolean>;
}

/**
 * Encrypts secret variables at rest (local: AES-256-GCM with a key in the data directory; AWS: KMS
 * envelope encryption). `context` names where the secret belongs (workspace and path) and is bound
 * to the ciphertext, so a ciphertext copied to another variable does not decrypt.
 */
export interface SecretCipher {
  encrypt(plaintext: string, context: Record<string, string>): Promise<string>;
  /** Throws when the ciphertext was altered or the context does not match. */
  decrypt(ciphertext: string, context: Record<string, string>): Promise<string>;
}

/**
 * Carries out flow runs for the core's interpreter (core/flows/advance.ts), which decides every
 * step. Local: the interpreter runs in-process, woken by events and timers. AWS: one Step Functions
 * execution per flow job calls the interpreter and waits on task tokens between calls.
 */
export interface FlowDriver {
  /**
   * Hands step jobs the interpreter has just stored to whatever runs them. Local: the job queue.
   * AWS: nothing to do here — the flow's execution sends them itself, each with a task token.
   */
  dispatch(jobs: Job[]): Promise<void>;
  /**
   * Makes the flow job's interpreter run again: a step finished, an approval or a cancel arrived.
   * `finishedStep` is the step job whose completion was just stored, when that is why: a driver
   * that runs the interpreter in this process hands it on, so it is not read back (AWS: ignored).
   */
  wake(workspaceId: string, flowJobId: string, finishedStep?: FinishedStep): Promise<void>;
  /**
   * The flow must be woken at `at` (or a little later), for an approval timeout; it may be woken
   * earlier too. AWS: the execution's waiting state has this timeout itself.
   */
  wakeAt(workspaceId: string, flowJobId: string, at: Date): Promise<void>;
}

/** Starts accepted jobs (local: queue table + pool; AWS: SQS for scripts, a Step Functions execution for flows). */
export interface JobQueue {
  enqueue(job: Job): Promise<void>;
  /**
   * Where a worker in this process is free (the local pool), holds it for the job with this id:
   * the job is then stored already `running` and handed over with `run`, one commit fewer than
   * queued-then-claimed. Null when the job must go through `enqueue`. `intent` says whether the
   * caller waits for the result and how long the run may last: the AWS api function runs only
   * awaited jobs it can hold to their end (adapters/aws/api-job-runner.ts); the local pool lets
   * such a caller wait a moment for a busy worker (a promise) rather than queue its job.
   */
  reserve?(job: JobRef, intent: RunIntent): JobSlot | null | Promise<JobSlot | null>;
}

/** The job a worker is reserved for: which, and whose (the local pool shares its workers fairly between workspaces). */
export type JobRef = Pick<Job, 'id' | 'workspace_id'>;

/** What the caller of a new job asks of it, for `JobQueue.reserve`. */
export interface RunIntent {
  /** The caller waits for the outcome (a sync webhook, an SSE stream) in this process. */
  callerWaits: boolean;
  /** The longest the run may take: the script's timeout within the instance's job timeout. */
  timeoutMs: number;
  /**
   * The job about to be stored, when the caller is a flow starting its step: a runner that holds
   * steps itself (the AWS flow runner, adapters/aws/inline-flow-steps.ts) decides on its code.
   */
  job?: Job;
}

/** A worker held for one job; exactly one of `run` (once the job is stored) or `cancel` follows. */
export interface JobSlot {
  run(job: Job): void;
  cancel(): void;
}

/**
 * Wakes up whoever waits on a job (sync endpoints, SSE streams). Local: an in-process emitter;
 * AWS: a poll interval. `wait` resolves on the next change or after `ms`, whichever is first.
 */
export interface JobSignals {
  /**
   * Wakes the job's waiters. `finished`: the job's final state, when the caller just stored it;
   * a waiter in this process then has its answer without reading the job again.
   */
  notify(jobId: string, finished?: FinishedJob): void;
  /** Resolves on the next notify (with what it carried) or after `ms` (with nothing). */
  wait(jobId: string, ms: number): Promise<FinishedJob | undefined>;
}

/** A finished job's outcome, as handed from the one who stored it to a waiter. */
export type FinishedJob = Pick<JobCompletion, 'status' | 'result'>;

/** A flow step's job as its completion was stored (FlowDriver.wake). */
export type FinishedStep = FinishedJob & { id: string };

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * Publishes ConsentGate notices to an SNS topic: the stack's approvals topic, or one the gate names
 * (AWS only; the local shell has none, and flows asking for SNS are refused there at create).
 */
export interface TopicPublisher {
  publish(notice: { topicArn: string | null; subject: string; text: string }): Promise<void>;
}

/** Sends email notices (local: SMTP; AWS: SES). Where none is configured, notices go to the outbox. */
export interface EmailSender {
  send(message: EmailMessage): Promise<void>;
}

/**
 * What wakes a schedule up (AWS: one EventBridge Scheduler schedule per item, invoking the schedule
 * function each minute that holds a tick). The local shell has none: its ticker reads the store.
 * Which tick runs, and that it runs once, is the core's decision (core/triggers/schedule-ticks.ts).
 */
export interface ScheduleTimers {
  /** Creates or replaces the item's timer; a disabled schedule keeps a disabled timer. */
  put(timer: { workspaceId: string; path: string; schedule: string; timezone: string; enabled: boolean }): Promise<void>;
  /** Removes the item's timer if there is one. */
  remove(workspaceId: string, path: string): Promise<void>;
}

export interface Clock {
  now(): Date;
}
