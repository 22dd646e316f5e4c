import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SNSClient } from '@aws-sdk/client-sns';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { CoreDeps } from '../core/deps.js';
import type { BlobStore, CodeRunner } from '../ports.js';
import { goTargetFromEnv, UploadedGoBinaries, withGoBinaryUrls } from '../adapters/aws/go-binaries.js';
import { createLambdaSandboxRunner, lambdaInvoke } from '../adapters/aws/lambda-sandbox-runner.js';
import type { SandboxInvoke } from '../adapters/aws/sandbox-protocol.js';
import { withPayloadOffload } from '../adapters/aws/sandbox-payload-offload.js';
import { awsConfigFromEnv, loadSecrets, requireSandboxFunctions, secretsManagerReader, type AwsConfig, type AwsSecrets } from '../adapters/aws/aws-config.js';
import { DynamoStore } from '../adapters/aws/dynamo-store.js';
import { CachedStore } from '../core/store/cached-store.js';
import { leaseUntil } from '../core/runs/worker.js';
import { KmsSecretCipher } from '../adapters/aws/kms-secret-cipher.js';
import { InProcessJobSignals } from '../adapters/in-process-job-signals.js';
import { S3BlobStore, s3ClientConfig } from '../adapters/aws/s3-blob-store.js';
import { TableStreamJobQueue } from '../adapters/aws/job-outbox.js';
import { SesEmailSender } from '../adapters/aws/ses-email-sender.js';
import { SnsTopicPublisher } from '../adapters/aws/sns-topic-publisher.js';
import { StepFunctionsFlowRunner } from '../adapters/aws/step-functions-flow-runner.js';
import { useLogger } from '../core/common/logger.js';
import { OutboundHttp } from '../adapters/outbound-http.js';
import { MeteredJobSignals } from '../adapters/aws/metered-job-signals.js';
import { powertoolsCoreLogger, tracer } from '../adapters/aws/powertools.js';
import { SchedulerTimers } from '../adapters/aws/scheduler-timers.js';
import { BuiltDependencies, lambdaBuilderInvoke, withDependencyUrls, type DependencyBuilderInvoke } from '../adapters/aws/dependency-builds.js';

// Lambda's logs go to CloudWatch, whose queries read the fields of JSON lines: the Powertools
// logger writes them, with the service name and the X-Ray trace id beside the core's fields.
useLogger(powertoolsCoreLogger());

/** An SDK client whose calls are X-Ray subsegments of the invocation's trace (a no-op outside Lambda). */
export const traced = <T>(client: T): T => tracer.captureAWSv3Client(client);

/** What every AWS handler shares: the config, the core's dependencies and the secrets. */
export interface AwsShell {
  config: AwsConfig;
  deps: CoreDeps;
  secrets: AwsSecrets;
  /** `deps.flows`, with what the flow-runner and worker functions also need of it. */
  flowRunner: StepFunctionsFlowRunner;
  /** Runs jobs in the sandbox functions `invoke` reaches; Go jobs carry a presigned URL of their binary; payloads past 6 MB go through the bucket. */
  sandboxRunner(invoke: SandboxInvoke): CodeRunner;
}

let builderOverride: DependencyBuilderInvoke | undefined;

/** Reaches the dependency builder another way than by its function (the emulator tier runs it in-process); before the first invocation. */
export function useDependencyBuilder(invoke: DependencyBuilderInvoke): void {
  builderOverride = invoke;
}

/**
 * Built on the first invocation and kept for the life of the execution environment, so secrets
 * are read once per cold start. Region, credentials and emulator endpoints come from the
 * environment the SDK reads (AWS_REGION, AWS_ENDPOINT_URL[_<SERVICE>], ...).
 */
export const awsShell = once(async (): Promise<AwsShell> => {
  const config = awsConfigFromEnv();
  const secretsClient = new SecretsManagerClient({});
  const secrets = await loadSecrets(config.secrets, secretsManagerReader(secretsClient)).finally(() => secretsClient.destroy());
  const s3 = traced(new S3Client(s3ClientConfig()));
  const blobs = new S3BlobStore({ client: s3, bucketName: config.bucketName });
  // Payloads too large for a DynamoDB item go to the bucket, under `_store/`.
  // A job stored already running carries the lease a worker's claim would (inline flow steps).
  const store = new DynamoStore({ client: traced(new DynamoDBClient({})), tableName: config.tableName, blobs, runningLeaseMs: Date.parse(leaseUntil(new Date(0), config.core)) });
  const clock = { now: () => new Date() };
  const flowRunner = new StepFunctionsFlowRunner({ client: traced(new SFNClient({})), stateMachineArn: config.stateMachineArn, store, clock });
  const deps: CoreDeps = {
    // The rows every request reads (token, user, workspace, settings, path heads) for a moment.
    store: new CachedStore(store),
    // A stored job is on its way: the table's stream hands it to the job dispatcher function,
    // which sends a script job to SQS or starts a flow's execution (adapters/aws/job-outbox.ts).
    queue: new TableStreamJobQueue(),
    flows: flowRunner,
    // Counted as they finish: the dashboard's jobs by status.
    signals: new MeteredJobSignals(new InProcessJobSignals({ holdProcess: true })),
    blobs,
    cipher: new KmsSecretCipher({ client: traced(new KMSClient({})), keyId: config.secretsKmsKeyId }),
    email: config.emailFrom ? new SesEmailSender(traced(new SESv2Client({})), config.emailFrom) : null,
    topics: config.approvalsTopicArn ? new SnsTopicPublisher(traced(new SNSClient({})), config.approvalsTopicArn) : null,
    outbound: new OutboundHttp({ allowPrivate: config.webhookAllowPrivate }),
    timers: config.scheduleTimers ? new SchedulerTimers({ client: traced(new SchedulerClient({})), ...config.scheduleTimers }) : null,
    clock,
    config: { ...config.core, signingKey: secrets.signingKey },
    // Go binaries are built by the CLI for the sandbox's architecture and kept in the bucket.
    compiler: new UploadedGoBinaries(blobs, goTargetFromEnv(process.env)),
    // Packages are resolved and built by the builder function, kept in the bucket by lock.
    dependencies: dependencyBuilder(config, blobs),
  };
  const sandboxRunner = (invoke: SandboxInvoke) =>
    withDependencyUrls(withGoBinaryUrls(createLambdaSandboxRunner(withPayloadOffload(invoke, s3, config.bucketName)), s3, config.bucketName), blobs, { maxWaitMs: config.dependencies.buildWaitMs });
  return { config, deps, secrets, flowRunner, sandboxRunner };
});

function dependencyBuilder(config: AwsConfig, blobs: BlobStore): BuiltDependencies | null {
  const { builderFunction } = config.dependencies;
  const invoke = builderOverride ?? (builderFunction ? lambdaBuilderInvoke(traced(new LambdaClient({})), builderFunction) : null);
  return invoke ? new BuiltDependencies(invoke, config.dependencies, blobs) : null;
}

/**
 * The deployed sandboxes: Lambda functions whose role has no permissions, each invoke naming the
 * job's workspace and run-as user as Lambda tenant. The worker and the api (sync webhooks) run
 * jobs through this one invoker.
 */
export function lambdaSandboxes(shell: AwsShell): SandboxInvoke {
  return lambdaInvoke(traced(new LambdaClient({})), requireSandboxFunctions(shell.config), { tenantPerWorkspace: true });
}

/**
 * Runs `build` once and shares its promise. A failure is not kept: the next invocation tries
 * again instead of the execution environment failing until Lambda recycles it.
 */
export function once<T>(build: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= build().catch((e: unknown) => {
      pending = undefined;
      throw e;
    }));
}
