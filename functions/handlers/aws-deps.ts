import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { CoreDeps } from '../core/deps.js';
import { awsConfigFromEnv, loadSecrets, secretsManagerReader, type AwsConfig, type AwsSecrets } from '../adapters/aws/aws-config.js';
import { DynamoStore } from '../adapters/aws/dynamo-store.js';
import { KmsSecretCipher } from '../adapters/aws/kms-secret-cipher.js';
import { InProcessJobSignals } from '../adapters/in-process-job-signals.js';
import { S3BlobStore, s3ClientConfig } from '../adapters/aws/s3-blob-store.js';
import { SqsJobQueue } from '../adapters/aws/sqs-job-queue.js';

/** What every AWS handler shares: the config, the core's dependencies and the secrets. */
export interface AwsShell {
  config: AwsConfig;
  deps: CoreDeps;
  secrets: AwsSecrets;
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
  const blobs = new S3BlobStore({ client: new S3Client(s3ClientConfig()), bucketName: config.bucketName });
  // One queue carries both jobs to run and flows to advance: the worker does both.
  const jobsQueue = new SqsJobQueue({ client: new SQSClient({}), queueUrl: config.jobsQueueUrl });
  const deps: CoreDeps = {
    // Payloads too large for a DynamoDB item go to the bucket, under `_store/`.
    store: new DynamoStore({ client: new DynamoDBClient({}), tableName: config.tableName, blobs }),
    queue: jobsQueue,
    flows: jobsQueue,
    signals: new InProcessJobSignals({ holdProcess: true }),
    blobs,
    cipher: new KmsSecretCipher({ client: new KMSClient({}), keyId: config.secretsKmsKeyId }),
    clock: { now: () => new Date() },
    config: { ...config.core, signingKey: secrets.signingKey },
  };
  return { config, deps, secrets };
});

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
