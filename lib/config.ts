import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';

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
}

export const DEFAULT_CONFIG: SvcConfig = {
  stage: 'dev',
  syncMaxWaitSeconds: 60,
  logRetentionDays: RetentionDays.ONE_MONTH,
  // Below Lambda's 900 s so the worker outlives the sandbox it waits on, with time to record the outcome.
  jobTimeoutSeconds: 840,
  maxOutputBytes: 256 * 1024,
};

/** Lambda cannot run longer than this, so neither can a job nor a sync wait. */
export const LAMBDA_MAX_SECONDS = 900;

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
  });
}

/** Fails synth early with a readable message rather than at deploy time. */
export function validateConfig(config: SvcConfig): SvcConfig {
  // Stage names become part of the API URL and of resource names.
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(config.stage)) throw new Error(`stage must match [a-zA-Z0-9_-]{1,64}, got ${JSON.stringify(config.stage)}`);
  for (const key of ['syncMaxWaitSeconds', 'jobTimeoutSeconds'] as const) {
    const value = config[key];
    if (value < 1 || value > LAMBDA_MAX_SECONDS) throw new Error(`${key} must be between 1 and ${LAMBDA_MAX_SECONDS} (Lambda's limit), got ${value}`);
  }
  if (!(Object.values(RetentionDays) as number[]).includes(config.logRetentionDays)) {
    throw new Error(`logRetentionDays must be a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, 60, 90, ...), got ${config.logRetentionDays}`);
  }
  if (config.maxOutputBytes < 1) throw new Error(`maxOutputBytes must be positive, got ${config.maxOutputBytes}`);
  if (config.notificationSender !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(config.notificationSender)) {
    throw new Error(`notificationSender must be an email address, got ${JSON.stringify(config.notificationSender)}`);
  }
  return config;
}

/** Production data outlives the stack; other stages clean up after themselves. */
export function removalPolicyFor(stage: string): RemovalPolicy {
  return stage === 'prod' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
}

function int(value: unknown, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n)) throw new Error(`expected an integer in the CDK context, got ${JSON.stringify(value)}`);
  return n;
}
