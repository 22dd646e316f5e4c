import type { RetrySchedule } from './events/retry-schedule.js';
import type { UploadSettings } from './uploads/upload-settings.js';
import type { BlobStore, Clock, CodeRunner, DependencyInstaller, ScriptCompiler, EmailSender, ScheduleTimers, TopicPublisher, FlowDriver, JobQueue, JobSignals, SecretCipher, Store, WebhookSender } from '../ports.js';

/** Instance settings the core needs; each shell reads them from its own environment. */
export interface CoreConfig {
  /** Where user code reaches the API (BASE_INTERNAL_URL). */
  baseInternalUrl: string;
  /** Default per-job timeout when a script sets none. */
  jobTimeoutMs: number;
  /**
   * How long a claim on a running job outlasts the job timeout: time for its worker to store the
   * outcome before another worker may take the job over (its lease, `leaseUntil`); 60 s when unset.
   */
  jobLeaseMarginMs?: number;
  /** Cap on what a job may print or stream. */
  maxOutputBytes: number;
  /** Instance-level maximum wait of the sync endpoints (spec 8). */
  syncMaxWaitMs: number;
  /** INCLUDE_HEADERS: header names passed to every run as arguments (spec 4.2 rule 6). */
  includeHeaders: string[];
  /** The instance secret that signs job tokens (and, later, resume URLs). */
  signingKey: Uint8Array;
  /** How often waiters re-read a job when the shell's signals cannot wake them (AWS). */
  pollIntervalMs: number;
  /**
   * How often a running job's worker re-reads it to see a cancel, where signals cannot wake it
   * (AWS); pollIntervalMs when unset. The cancel itself is stored at once; this only bounds how
   * long the worker listens on, and every look is a read billed per running second.
   */
  cancelPollIntervalMs?: number;
  /** When failed webhook deliveries are tried again, and each attempt's time limit. */
  webhookRetry: RetrySchedule;
  /** Large uploads: size limit, part size, how long part URLs stay valid (README: Large uploads). */
  uploads: UploadSettings;
  /** The most iterations a flow's while loop may run (docs/flows.md); 1,000 when unset. */
  flowMaxWhileIterations?: number;
  /** The most items a flow's for loop may go over (docs/flows.md); 10,000 when unset. */
  flowMaxLoopItems?: number;
  /** The most levels of jobs above a run a job started with its token (core/jobs/run-admission.ts); 32 when unset. */
  maxRunDepth?: number;
  /** The most queued (not yet started) jobs of a workspace before new runs are refused (run-admission.ts); 10,000 when unset. */
  maxQueuedJobsPerWorkspace?: number;
  /** The most jobs one top-level run may consist of, at every level (core/jobs/run-budget.ts); 100,000 when unset. */
  maxJobsPerRun?: number;
}

export interface CoreDeps {
  store: Store;
  queue: JobQueue;
  flows: FlowDriver;
  signals: JobSignals;
  blobs: BlobStore;
  cipher: SecretCipher;
  /** Null when the instance has no mail set up: notices then wait in the outbox the API lists. */
  email: EmailSender | null;
  /** SNS for ConsentGate notices; only the AWS shell has it. */
  topics?: TopicPublisher | null;
  /** The SSRF-guarded client for outbound webhook requests (adapters/outbound-http.ts); the shells that send set it. */
  outbound?: WebhookSender | null;
  /** Timers for schedules; only the AWS shell has them (the local shell's ticker reads the store). */
  timers?: ScheduleTimers | null;
  clock: Clock;
  config: CoreConfig;
  /** Builds compiled languages (Go) at create; absent where the shell has no toolchain (README: Go scripts). */
  compiler?: ScriptCompiler | null;
  /** Resolves and installs scripts' packages; absent where the shell installs none (README: Dependencies). */
  dependencies?: DependencyInstaller | null;
}

/** The worker side additionally runs user code. */
export interface WorkerDeps extends CoreDeps {
  runner: CodeRunner;
}
