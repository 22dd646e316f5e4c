import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { MAX_RECEIVE_COUNT } from './constructs/job-queue.js';

/** Jobs one worker invocation takes at once; it runs them concurrently, each in its own sandbox call. */
export const WORKER_BATCH_SIZE = 5;

/** What varies between deployments of svc; everything else is fixed by the design. */
export interface SvcConfig {
  /** Names the API stage and the stack; `prod` keeps data when the stack is deleted. */
  readonly stage: string;
  /** Longest a sync webhook waits for its job before answering with the job id. */
  readonly syncMaxWaitSeconds: number;
  readonly logRetentionDays: RetentionDays;
  /** A job's wall-clock limit; Lambda's own 15-minute limit caps it. */
  readonly jobTimeoutSeconds: number;
  /** Output a job may print before it is stopped; its log and result share one 400 KB DynamoDB item. */
  readonly maxOutputBytes: number;
  /**
   * The SES identity (an address, or a domain's address) email notices come from; it must be
   * verified in the account. Unset: notices wait in the outbox the API lists.
   */
  readonly notificationSender?: string;
  /**
   * A custom domain for the API (`api.example.com`), served by API Gateway with the ACM certificate
   * `certificateArn` (same region). Set both or neither. The stage is mapped under `basePath` (or
   * at the root), and every URL the service builds (resume, cancel, approval pages,
   * BASE_INTERNAL_URL) uses it; point a DNS record at the `CustomDomainTarget` output.
   */
  readonly domainName?: string;
  readonly certificateArn?: string;
  readonly basePath?: string;
  /**
   * Reserved concurrency of the api, the worker and each sandbox function. Unset (the default):
   * they share the account's pool, as a new account with a quota of 10 requires (Lambda keeps 100
   * unreserved, so reserving anything fails there). Set them once the quota is raised, so a job
   * burst cannot starve the API.
   */
  readonly apiReservedConcurrency?: number;
  readonly workerReservedConcurrency?: number;
  readonly sandboxReservedConcurrency?: number;
  /**
   * Most worker invocations the jobs queue starts at once (the event source's maxConcurrency, 2 to
   * 1000). Each runs up to WORKER_BATCH_SIZE jobs, each in a sandbox invocation, so this bounds a
   * burst's sandbox concurrency too: the cap that holds on any account.
   */
  readonly workerMaxConcurrency: number;
  /** The stage's steady-state requests per second and burst, across all clients. */
  readonly throttleRateLimit: number;
  readonly throttleBurstLimit: number;
  /**
   * The api function's timeout and API Gateway's integration timeout: the longest a request (a
   * sync webhook, an SSE stream) may last. At least the sync wait, at most Lambda's 900 s.
   */
  readonly apiTimeoutSeconds: number;
  /**
   * Memory of the api and worker functions, in MB. Both mostly wait: the worker relays a job's
   * output from its sandbox, the api holds requests (and runs sync webhooks' jobs through the
   * sandboxes), so while a script runs they are billed at this size beside the sandbox's. Lambda
   * gives CPU in proportion to memory, so less memory also means slower cold starts and requests.
   */
  readonly apiMemoryMb: number;
  readonly workerMemoryMb: number;
  /**
   * Plain script steps of a flow run inside the flow runner's Advance when their timeout fits in
   * its invocation, instead of a worker reached through SQS and a task token (docs/aws.md "Costs"):
   * a 10-step flow then takes about 3 state transitions instead of 33. `false` sends every step
   * to the worker.
   */
  readonly flowInlineSteps: boolean;
  /** Memory of the flow-runner function, in MB: it mostly waits on the sandbox while a step runs. */
  readonly flowRunnerMemoryMb: number;
  /**
   * A script job still queued this long after it was created is failed by the reaper (it was
   * lost: its message expired or was dropped). Longer than the jobs queue can keep retrying one.
   */
  readonly queuedDeadlineSeconds: number;
  /**
   * The largest file an upload may declare (README: Large uploads). Its parts go from the client
   * straight to S3 by presigned URL, so this is not bounded by the api's body limit.
   */
  readonly maxUploadBytes: number;
  /**
   * Origins whose pages may PUT upload parts to the bucket from a browser (its CORS rule). The
   * presigned URL is the credential, so `*` lets any page upload what the API let it create.
   */
  readonly uploadAllowedOrigins: string[];
  /** Where the dependency builder takes scripts' npm packages and Python wheels from (docs/dependencies-aws.md). */
  readonly npmRegistry: string;
  readonly pipIndexUrl: string;
  /**
   * A private npm registry's token: the complete ARN of a Secrets Manager secret the operator made
   * (its SecretString is the token), read by the dependency builder alone. Never a value here.
   */
  readonly npmTokenSecretArn?: string;
}

export const DEFAULT_CONFIG: SvcConfig = {
  stage: 'dev',
  syncMaxWaitSeconds: 60,
  logRetentionDays: RetentionDays.ONE_MONTH,
  // Below Lambda's 900 s so the worker outlives the sandbox it waits on, with time to record the outcome.
  jobTimeoutSeconds: 840,
  maxOutputBytes: 256 * 1024,
  workerMaxConcurrency: 10,
  throttleRateLimit: 100,
  throttleBurstLimit: 200,
  apiTimeoutSeconds: 900,
  // Measured in README "Cost per million runs": both bundles load in under 100 MB.
  apiMemoryMb: 512,
  workerMemoryMb: 256,
  flowInlineSteps: true,
  flowRunnerMemoryMb: 256,
  queuedDeadlineSeconds: 6 * 3600,
  maxUploadBytes: 5 * 1024 ** 3,
  uploadAllowedOrigins: ['*'],
  npmRegistry: 'https://registry.npmjs.org/',
  pipIndexUrl: 'https://pypi.org/simple/',
};

/**
 * The part size the api gives uploads: 64 MiB, or larger where the upload limit would otherwise
 * need more than S3's 10,000 parts (rounded up to whole MiB).
 */
export function uploadPartBytes(maxUploadBytes: number): number {
  const mib = 1024 * 1024;
  return Math.max(64 * mib, Math.ceil(maxUploadBytes / 10_000 / mib) * mib);
}

/** Lambda cannot run longer than this, so neither can a job nor a sync wait. */
export const LAMBDA_MAX_SECONDS = 900;
/**
 * API Gateway closes a streamed response (the api's integrations stream) that sends nothing for
 * this long: 5 minutes on a regional endpoint. A sync webhook sends nothing until it answers.
 */
export const STREAMED_RESPONSE_IDLE_SECONDS = 300;
/** The longest sync wait: under the idle limit, with time left for the rest of the request. */
export const SYNC_MAX_WAIT_LIMIT_SECONDS = STREAMED_RESPONSE_IDLE_SECONDS - 10;
/** How long the jobs queue keeps delivering one job: every receive, each after the worker's longest hold. */
const QUEUE_RETRY_SECONDS = MAX_RECEIVE_COUNT * (LAMBDA_MAX_SECONDS + 60);
/** A Lambda function's memory range, in MB. */
const LAMBDA_MIN_MEMORY_MB = 128;
const LAMBDA_MAX_MEMORY_MB = 10_240;

/** Reads `cdk.json` / `-c key=value` context, falling back to the defaults, and checks it. */
export function configFromContext(node: Node): SvcConfig {
  const read = (key: keyof SvcConfig): unknown => node.tryGetContext(key);
  return validateConfig({
    stage: String(read('stage') ?? DEFAULT_CONFIG.stage),
    syncMaxWaitSeconds: int(read('syncMaxWaitSeconds'), DEFAULT_CONFIG.syncMaxWaitSeconds),
    logRetentionDays: int(read('logRetentionDays'), DEFAULT_CONFIG.logRetentionDays),
    jobTimeoutSeconds: int(read('jobTimeoutSeconds'), DEFAULT_CONFIG.jobTimeoutSeconds),
    maxOutputBytes: int(read('maxOutputBytes'), DEFAULT_CONFIG.maxOutputBytes),
    notificationSender: (read('notificationSender') as string | undefined) || undefined,
    domainName: optionalString(read('domainName')),
    certificateArn: optionalString(read('certificateArn')),
    basePath: optionalString(read('basePath')),
    apiReservedConcurrency: optionalInt(read('apiReservedConcurrency')),
    workerReservedConcurrency: optionalInt(read('workerReservedConcurrency')),
    sandboxReservedConcurrency: optionalInt(read('sandboxReservedConcurrency')),
    workerMaxConcurrency: int(read('workerMaxConcurrency'), DEFAULT_CONFIG.workerMaxConcurrency),
    throttleRateLimit: int(read('throttleRateLimit'), DEFAULT_CONFIG.throttleRateLimit),
    throttleBurstLimit: int(read('throttleBurstLimit'), DEFAULT_CONFIG.throttleBurstLimit),
    apiTimeoutSeconds: int(read('apiTimeoutSeconds'), DEFAULT_CONFIG.apiTimeoutSeconds),
    apiMemoryMb: int(read('apiMemoryMb'), DEFAULT_CONFIG.apiMemoryMb),
    workerMemoryMb: int(read('workerMemoryMb'), DEFAULT_CONFIG.workerMemoryMb),
    flowInlineSteps: read('flowInlineSteps') === undefined ? DEFAULT_CONFIG.flowInlineSteps : String(read('flowInlineSteps')) !== 'false',
    flowRunnerMemoryMb: int(read('flowRunnerMemoryMb'), DEFAULT_CONFIG.flowRunnerMemoryMb),
    queuedDeadlineSeconds: int(read('queuedDeadlineSeconds'), DEFAULT_CONFIG.queuedDeadlineSeconds),
    maxUploadBytes: int(read('maxUploadBytes'), DEFAULT_CONFIG.maxUploadBytes),
    uploadAllowedOrigins: optionalString(read('uploadAllowedOrigins'))?.split(',').map((o) => o.trim()) ?? DEFAULT_CONFIG.uploadAllowedOrigins,
    npmRegistry: optionalString(read('npmRegistry')) ?? DEFAULT_CONFIG.npmRegistry,
    pipIndexUrl: optionalString(read('pipIndexUrl')) ?? DEFAULT_CONFIG.pipIndexUrl,
    npmTokenSecretArn: optionalString(read('npmTokenSecretArn')),
  });
}

/** Fails synth early with a readable message rather than at deploy time. */
export function validateConfig(config: SvcConfig): SvcConfig {
  // Stage names become part of the API URL and of resource names.
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(config.stage)) throw new Error(`stage must match [a-zA-Z0-9_-]{1,64}, got ${JSON.stringify(config.stage)}`);
  for (const key of ['syncMaxWaitSeconds', 'jobTimeoutSeconds', 'apiTimeoutSeconds'] as const) {
    const value = config[key];
    if (value < 1 || value > LAMBDA_MAX_SECONDS) throw new Error(`${key} must be between 1 and ${LAMBDA_MAX_SECONDS} (Lambda's limit), got ${value}`);
  }
  if (!(Object.values(RetentionDays) as number[]).includes(config.logRetentionDays)) {
    throw new Error(`logRetentionDays must be a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, 60, 90, ...), got ${config.logRetentionDays}`);
  }
  if (config.maxOutputBytes < 1) throw new Error(`maxOutputBytes must be positive, got ${config.maxOutputBytes}`);
  // The complete ARN (with the suffix Secrets Manager adds), so the grant names that secret only.
  if (config.npmTokenSecretArn !== undefined && !/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+-[A-Za-z0-9]{6}$/.test(config.npmTokenSecretArn)) {
    throw new Error(`npmTokenSecretArn must be the complete ARN of a Secrets Manager secret (arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>), got ${JSON.stringify(config.npmTokenSecretArn)}`);
  }
  if (config.notificationSender !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(config.notificationSender)) {
    throw new Error(`notificationSender must be an email address, got ${JSON.stringify(config.notificationSender)}`);
  }
  if (config.syncMaxWaitSeconds > SYNC_MAX_WAIT_LIMIT_SECONDS) {
    throw new Error(
      `syncMaxWaitSeconds must be at most ${SYNC_MAX_WAIT_LIMIT_SECONDS}, got ${config.syncMaxWaitSeconds}: API Gateway closes a streamed response idle for ${STREAMED_RESPONSE_IDLE_SECONDS} s (its 5-minute idle limit on a regional endpoint), and a sync webhook sends nothing until it answers`,
    );
  }
  if (config.apiTimeoutSeconds < config.syncMaxWaitSeconds) {
    throw new Error(`apiTimeoutSeconds (${config.apiTimeoutSeconds}) must be at least syncMaxWaitSeconds (${config.syncMaxWaitSeconds}): the api answers a sync webhook within its own timeout`);
  }
  if ((config.domainName === undefined) !== (config.certificateArn === undefined)) throw new Error('domainName and certificateArn go together: set both or neither');
  if (config.domainName !== undefined && !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i.test(config.domainName)) {
    throw new Error(`domainName must be a DNS name, got ${JSON.stringify(config.domainName)}`);
  }
  if (config.basePath !== undefined && !/^[a-zA-Z0-9._-]+$/.test(config.basePath)) throw new Error(`basePath must be one path segment, got ${JSON.stringify(config.basePath)}`);
  if (!Number.isInteger(config.workerMaxConcurrency) || config.workerMaxConcurrency < 2 || config.workerMaxConcurrency > 1000) {
    throw new Error(`workerMaxConcurrency must be between 2 and 1000 (the SQS event source's range), got ${config.workerMaxConcurrency}`);
  }
  for (const key of ['apiReservedConcurrency', 'workerReservedConcurrency', 'sandboxReservedConcurrency'] as const) {
    const value = config[key];
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) throw new Error(`${key} must be a positive integer when set, got ${value}`);
  }
  // A reservation below what the event source may start throttles the worker's own invocations,
  // and a sandbox reservation below the jobs those run at once fails jobs: refuse both at synth.
  if (config.workerReservedConcurrency !== undefined && config.workerReservedConcurrency < config.workerMaxConcurrency) {
    throw new Error(`workerReservedConcurrency (${config.workerReservedConcurrency}) must be at least workerMaxConcurrency (${config.workerMaxConcurrency})`);
  }
  const sandboxesNeeded = config.workerMaxConcurrency * WORKER_BATCH_SIZE;
  if (config.sandboxReservedConcurrency !== undefined && config.sandboxReservedConcurrency < sandboxesNeeded) {
    throw new Error(`sandboxReservedConcurrency (${config.sandboxReservedConcurrency}) must be at least workerMaxConcurrency x ${WORKER_BATCH_SIZE} jobs per batch = ${sandboxesNeeded}`);
  }
  for (const key of ['throttleRateLimit', 'throttleBurstLimit'] as const) {
    if (!(config[key] > 0)) throw new Error(`${key} must be positive, got ${config[key]}`);
  }
  // S3's limits: 10,000 parts of at most 5 GiB make an object of at most 5 TiB.
  if (!Number.isSafeInteger(config.maxUploadBytes) || config.maxUploadBytes < 1 || config.maxUploadBytes > 5 * 1024 ** 4) {
    throw new Error(`maxUploadBytes must be between 1 and 5 TiB (S3's largest object), got ${config.maxUploadBytes}`);
  }
  if (config.uploadAllowedOrigins.length === 0 || config.uploadAllowedOrigins.some((o) => o !== '*' && !/^https?:\/\/[^/\s]+$/.test(o))) {
    throw new Error(`uploadAllowedOrigins must be * or origins such as https://app.example.com, got ${JSON.stringify(config.uploadAllowedOrigins)}`);
  }
  for (const key of ['apiMemoryMb', 'workerMemoryMb', 'flowRunnerMemoryMb'] as const) {
    const value = config[key];
    if (!Number.isInteger(value) || value < LAMBDA_MIN_MEMORY_MB || value > LAMBDA_MAX_MEMORY_MB) {
      throw new Error(`${key} must be between ${LAMBDA_MIN_MEMORY_MB} and ${LAMBDA_MAX_MEMORY_MB} MB (Lambda's range), got ${value}`);
    }
  }
  if (config.queuedDeadlineSeconds < QUEUE_RETRY_SECONDS) {
    throw new Error(`queuedDeadlineSeconds must be at least ${QUEUE_RETRY_SECONDS} (the jobs queue delivers a job ${MAX_RECEIVE_COUNT} times, up to ${LAMBDA_MAX_SECONDS + 60} s apart), got ${config.queuedDeadlineSeconds}`);
  }
  return config;
}

/** Production data outlives the stack; other stages clean up after themselves. */
export function removalPolicyFor(stage: string): RemovalPolicy {
  return stage === 'prod' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
}

function optionalString(value: unknown): string | undefined {
  return value === undefined || value === null || value === '' ? undefined : String(value);
}

function optionalInt(value: unknown): number | undefined {
  return value === undefined || value === null || value === '' ? undefined : int(value, 0);
}

function int(value: unknown, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n)) throw new Error(`expected an integer in the CDK context, got ${JSON.stringify(value)}`);
  return n;
}
