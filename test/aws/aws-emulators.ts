import { createTestTable, dynamoClient, externalEndpoint, startDynamoDb } from './dynamodb-local.js';
import { EMULATOR_CREDENTIALS, EMULATOR_REGION } from './emulator-endpoints.js';
import { createTestKey, kmsClient, startKms } from './kms-local.js';
import { createTestBucket, s3Client, startS3 } from './s3-local.js';
import type { SharedEndpoints } from './shared-endpoints.js';
import { createTestQueue, sqsClient, startSqs } from './sqs-local.js';

/**
 * Everything the AWS shell's handlers talk to, on loopback: DynamoDB Local, local-aws-sqs, s3rver
 * and moto's KMS, with the table, the jobs queue (and its DLQ), the bucket and the secrets key
 * created the way the stack makes them. With SVC_TEST_AWS_ENDPOINT set, the resources are made
 * there instead. `shared` names a DynamoDB Local and a moto server that outlive this (the test
 * run's, shared-emulators.ts): then only the resources are made there, and removed at stop().
 */
export interface AwsEmulators {
  /** The environment that points the handlers' SDK clients and config at these resources. */
  env: Record<string, string>;
  queueUrl: string;
  deadLetterQueueUrl: string;
  stop(): Promise<void>;
}

/** Mirrors lib/constructs/job-queue.ts: a job that fails this many deliveries goes to the DLQ. */
const MAX_RECEIVE_COUNT = 3;
/** Short next to the stack's (worker timeout + 1 min), so a failed job is retried within a test run. */
const VISIBILITY_TIMEOUT_SECONDS = 30;

export async function startAwsEmulators(opts: { dataDir?: string; shared?: SharedEndpoints } = {}): Promise<AwsEmulators> {
  const shared = opts.shared ?? {};
  // The in-process SQS and S3 emulators start in a blink: only the JVM and the python are shared.
  const borrow = (endpoint: string) => ({ endpoint, stop: async () => {} });
  const [dynamo, sqs, s3, kms] = await Promise.all([
    shared.dynamodb ? borrow(shared.dynamodb) : startDynamoDb(),
    startSqs(),
    startS3(opts.dataDir),
    shared.kms ? borrow(shared.kms) : startKms(),
  ]);
  const clients = { dynamo: dynamoClient(dynamo.endpoint), sqs: sqsClient(sqs.endpoint), s3: s3Client(s3.endpoint), kms: kmsClient(kms.endpoint) };
  const [table, queue, bucket, key] = await Promise.all([
    createTestTable(clients.dynamo),
    createTestQueue(clients.sqs, { visibilityTimeoutSeconds: VISIBILITY_TIMEOUT_SECONDS, maxReceiveCount: MAX_RECEIVE_COUNT }),
    createTestBucket(clients.s3),
    createTestKey(clients.kms),
  ]);
  const emulated = externalEndpoint() === null;
  return {
    env: {
      AWS_REGION: emulated ? EMULATOR_REGION : (process.env.AWS_REGION ?? EMULATOR_REGION),
      ...(emulated ? { AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey } : {}),
      // Service-specific endpoint variables, read by the SDK itself: the handlers never see them.
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_ENDPOINT_URL_KMS: kms.endpoint,
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      JOBS_QUEUE_URL: queue.queueUrl,
      SECRETS_KMS_KEY_ID: key.keyArn,
    },
    queueUrl: queue.queueUrl,
    deadLetterQueueUrl: queue.deadLetterQueueUrl,
    async stop() {
      // Only what outlives this keeps anything (a real endpoint, the shared emulators); the
      // emulators started here forget it all when they stop.
      await Promise.allSettled([
        ...(!emulated || shared.dynamodb ? [table.drop()] : []),
        ...(!emulated ? [queue.drop(), bucket.drop()] : []),
        ...(!emulated || shared.kms ? [key.drop()] : []),
      ]);
      for (const client of Object.values(clients)) client.destroy();
      await Promise.allSettled([dynamo.stop(), sqs.stop(), s3.stop(), kms.stop()]);
    },
  };
}
