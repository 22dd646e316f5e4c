import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CoreConfig } from '../../core/deps.js';
import { retryScheduleFromEnv } from '../../core/events/retry-schedule.js';
import { uploadSettingsFromEnv } from '../../core/uploads/upload-sessions.js';
import { DEFAULT_MAX_QUEUED_JOBS_PER_WORKSPACE, DEFAULT_MAX_RUN_DEPTH } from '../../core/jobs/run-admission.js';
import { maxJobsPerRunFromEnv } from '../../core/jobs/run-budget.js';
import type { SandboxFunctions } from './lambda-sandbox-runner.js';

/**
 * The AWS shell's settings, from the Lambda environment the stack sets (README lists them).
 * Secrets are named by ARN and read from Secrets Manager once per cold start; tests and emulators
 * may give their values directly instead (`SIGNING_KEY_HEX`, `SVC_ADMIN_TOKEN`).
 */
export interface AwsConfig {
  tableName: string;
  bucketName: string;
  jobsQueueUrl: string;
  /** The SES identity email notices come from; null: notices wait in the outbox. */
  emailFrom: string | null;
  /** The stack's SNS topic for ConsentGate notices (APPROVALS_TOPIC_ARN). */
  approvalsTopicArn: string | null;
  /** Where schedules' EventBridge Scheduler timers go (SCHEDULE_GROUP_NAME, SCHEDULE_TARGET_ARN, SCHEDULER_ROLE_ARN); null: functions that do not save schedules. */
  scheduleTimers: { groupName: string; targetArn: string; roleArn: string } | null;
  /** The flow-runner state machine; only those that start flows (the api) need it. */
  stateMachineArn: string | null;
  /** The KMS key that wraps the data keys of secret variables (the stack passes its ARN). */
  secretsKmsKeyId: string;
  defaultWorkspace: string;
  maxBodyBytes: number;
  sseKeepAliveMs: number;
  /** SSE_MAX_SECONDS: an SSE stream ends (with a `timeout` event) this long after it began, before the api function's timeout cuts it. */
  sseMaxMs: number;
  /** SVC_WEBHOOK_ALLOW_PRIVATE=1: webhooks may reach loopback and private addresses (tests only, on AWS). */
  webhookAllowPrivate: boolean;
  /** Scripts' packages (docs/dependencies-aws.md): the builder function (DEPS_BUILDER_FUNCTION; unset, scripts importing packages are refused), the registries, and how long a run waits for a build. */
  dependencies: { builderFunction: string | null; npmRegistry: string; pipIndexUrl: string; buildWaitMs: number };
  /** Only the worker invokes sandboxes; `requireSandboxFunctions` checks they are set. */
  sandboxFunctions: Partial<SandboxFunctions>;
  /** The admin token only the api needs (bootstrap); the worker's environment does not name it. */
  secrets: { signingKey: SecretSource; adminToken: SecretSource | null };
  core: Omit<CoreConfig, 'signingKey'>;
}

/** Where a secret's value comes from: Secrets Manager, or the environment (tests, emulators). */
export type SecretSource = { arn: string } | { value: string };

export interface AwsSecrets {
  signingKey: Uint8Array;
  adminToken: string | null;
}

export type SecretReader = (arn: string) => Promise<string>;

/** The Lambda runtime's 6 MB invocation payload, less the event around a base64 body (4/3). */
const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Result and logs live in one DynamoDB item (400 KB), arguments beside them. */
const DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024;
/** Must stay under the worker and sandbox Lambda timeouts (at most 900 s). */
const DEFAULT_JOB_TIMEOUT_SECONDS = 600;
/**
 * After the job timeout, time to store the outcome before another invocation may take the job
 * over. The stack sets none: the reaper calls a running job lost only 300 s and the queue's
 * visibility timeout past the job timeout (lib/constructs/job-delivery.ts), well after this.
 */
const DEFAULT_JOB_LEASE_MARGIN_SECONDS = 60;
const DEFAULT_SYNC_MAX_WAIT_SECONDS = 60;
/** Lambda's 900 s, less time to write the last event and close (the stack sets it from apiTimeoutSeconds). */
const DEFAULT_SSE_MAX_SECONDS = 880;
/** Waiters re-read the job from DynamoDB this often: the only way to see another Lambda's writes. */
const POLL_INTERVAL_MS = 100;
/**
 * A running job's worker (or flow runner, or api) looks for a cancel once a second, not every
 * POLL_INTERVAL_MS: each look is a read of the job, ten a second of a script's run at 100 ms
 * (docs/aws.md "Costs"); the cancel is stored at once, only the worker lets go up to a second later.
 */
const CANCEL_POLL_INTERVAL_MS = 1000;

export function awsConfigFromEnv(env: NodeJS.ProcessEnv = process.env): AwsConfig {
  return {
    tableName: required(env, 'TABLE_NAME'),
    bucketName: required(env, 'BUCKET_NAME'),
    jobsQueueUrl: required(env, 'JOBS_QUEUE_URL'),
    stateMachineArn: env.STATE_MACHINE_ARN || null,
    emailFrom: env.SES_FROM_ADDRESS || null,
    approvalsTopicArn: env.APPROVALS_TOPIC_ARN || null,
    scheduleTimers: env.SCHEDULE_GROUP_NAME && env.SCHEDULE_TARGET_ARN && env.SCHEDULER_ROLE_ARN
      ? { groupName: env.SCHEDULE_GROUP_NAME, targetArn: env.SCHEDULE_TARGET_ARN, roleArn: env.SCHEDULER_ROLE_ARN }
      : null,
    secretsKmsKeyId: required(env, 'SECRETS_KMS_KEY_ID'),
    defaultWorkspace: env.SVC_DEFAULT_WORKSPACE || 'main',
    maxBodyBytes: int(env, 'MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES),
    sseKeepAliveMs: int(env, 'SSE_KEEPALIVE_SECONDS', 15) * 1000,
    sseMaxMs: int(env, 'SSE_MAX_SECONDS', DEFAULT_SSE_MAX_SECONDS) * 1000,
    webhookAllowPrivate: env.SVC_WEBHOOK_ALLOW_PRIVATE === '1',
    dependencies: {
      builderFunction: env.DEPS_BUILDER_FUNCTION || null,
      npmRegistry: env.NPM_CONFIG_REGISTRY || 'https://registry.npmjs.org/',
      pipIndexUrl: env.PIP_INDEX_URL || 'https://pypi.org/simple/',
      // The builder's timeout (15 min) and a margin.
      buildWaitMs: int(env, 'DEPS_BUILD_WAIT_SECONDS', 960) * 1000,
    },
    sandboxFunctions: { node: env.SANDBOX_NODE_FUNCTION || undefined, python: env.SANDBOX_PYTHON_FUNCTION || undefined },
    secrets: {
      signingKey: secretSource(env, 'SIGNING_KEY_SECRET_ARN', 'SIGNING_KEY_HEX') ?? missing('SIGNING_KEY_SECRET_ARN (or, outside AWS, SIGNING_KEY_HEX)'),
      adminToken: secretSource(env, 'ADMIN_TOKEN_SECRET_ARN', 'SVC_ADMIN_TOKEN'),
    },
    core: {
      // The stage URL (RestApi.url ends in a slash); scripts append `/api/...` to it.
      baseInternalUrl: (env.API_BASE_URL ?? '').replace(/\/+$/, ''),
      jobTimeoutMs: int(env, 'JOB_TIMEOUT_SECONDS', DEFAULT_JOB_TIMEOUT_SECONDS) * 1000,
      jobLeaseMarginMs: int(env, 'JOB_LEASE_MARGIN_SECONDS', DEFAULT_JOB_LEASE_MARGIN_SECONDS) * 1000,
      maxOutputBytes: int(env, 'MAX_OUTPUT_BYTES', DEFAULT_MAX_OUTPUT_BYTES),
      syncMaxWaitMs: int(env, 'SYNC_MAX_WAIT_SECONDS', DEFAULT_SYNC_MAX_WAIT_SECONDS) * 1000,
      includeHeaders: (env.INCLUDE_HEADERS ?? '').split(',').map((h) => h.trim()).filter(Boolean),
      pollIntervalMs: POLL_INTERVAL_MS,
      cancelPollIntervalMs: CANCEL_POLL_INTERVAL_MS,
      webhookRetry: retryScheduleFromEnv(env),
      uploads: uploadSettingsFromEnv(env, ''),
      flowMaxWhileIterations: int(env, 'FLOW_MAX_WHILE_ITERATIONS', 1000),
      flowMaxLoopItems: int(env, 'FLOW_MAX_LOOP_ITEMS', 10_000),
      maxRunDepth: int(env, 'MAX_RUN_DEPTH', DEFAULT_MAX_RUN_DEPTH),
      maxQueuedJobsPerWorkspace: int(env, 'MAX_QUEUED_JOBS_PER_WORKSPACE', DEFAULT_MAX_QUEUED_JOBS_PER_WORKSPACE),
      maxJobsPerRun: maxJobsPerRunFromEnv(env, 'MAX_JOBS_PER_RUN'),
    },
  };
}

export function requireSandboxFunctions(config: AwsConfig): SandboxFunctions {
  const { node, python } = config.sandboxFunctions;
  if (!node || !python) throw new Error('SANDBOX_NODE_FUNCTION and SANDBOX_PYTHON_FUNCTION must name the sandbox functions');
  return { node, python };
}

export async function loadSecrets(sources: AwsConfig['secrets'], read: SecretReader): Promise<AwsSecrets> {
  const value = (source: SecretSource) => ('arn' in source ? read(source.arn) : Promise.resolve(source.value));
  const [signingKeyHex, adminToken] = await Promise.all([value(sources.signingKey), sources.adminToken && value(sources.adminToken)]);
  return { signingKey: signingKeyFromHex(signingKeyHex), adminToken: adminToken?.trim() || null };
}

/** The api bootstraps the admin with it: a Lambda has no console to show a freshly made token once. */
export function requireAdminToken(secrets: AwsSecrets): string {
  return secrets.adminToken ?? missing('ADMIN_TOKEN_SECRET_ARN (or, outside AWS, SVC_ADMIN_TOKEN)');
}

export function secretsManagerReader(client: SecretsManagerClient): SecretReader {
  return async (arn) => {
    const secret = await client.send(new GetSecretValueCommand({ SecretId: arn }));
    if (secret.SecretString === undefined) throw new Error(`secret ${arn} has no string value`);
    return secret.SecretString;
  };
}

/** The instance signing key: 64 hex characters, 32 bytes. Never echoed in errors. */
export function signingKeyFromHex(hex: string): Uint8Array {
  const trimmed = hex.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(trimmed)) throw new Error('the signing key secret must be 64 hex characters (32 bytes)');
  return new Uint8Array(Buffer.from(trimmed, 'hex'));
}

/** The secret named by ARN in `arnName`, else the value in `valueName` (tests, emulators), else none. */
export function secretSource(env: NodeJS.ProcessEnv, arnName: string, valueName: string): SecretSource | null {
  const arn = env[arnName];
  if (arn) return { arn };
  const value = env[valueName];
  return value ? { value } : null;
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  return env[name] || missing(name);
}

function missing(name: string): never {
  throw new Error(`${name} must be set`);
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name}: expected a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}
