import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { externalEndpoint } from './dynamodb-local.js';
import { clientConfig } from './emulator-endpoints.js';

/**
 * SQS for the aws tier: `local-aws-sqs` in this process on a free loopback port, or whatever
 * SVC_TEST_AWS_ENDPOINT names. Quirks to keep in mind: a long poll asking for several messages
 * waits its whole WaitTimeSeconds to fill the batch, and ChangeMessageVisibility inflates the
 * receive count.
 */
export interface SqsEndpoint {
  endpoint: string;
  stop(): Promise<void>;
}

export async function startSqs(): Promise<SqsEndpoint> {
  const external = externalEndpoint();
  if (external) return { endpoint: external, stop: async () => {} };
  // Without the lifecycle emulation a test may delete and re-create a queue name at once.
  const server = await createSqsServer({ port: 0, hostname: '127.0.0.1', emulateQueueCreationLifecycle: false });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        // Long polls hold connections open; they must not keep the server (and the process) alive.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sqsClient(endpoint: string): SQSClient {
  return new SQSClient(clientConfig(endpoint));
}

export interface TestQueue {
  queueUrl: string;
  deadLetterQueueUrl: string;
  drop(): Promise<void>;
}

/** A jobs queue with its dead-letter queue, shaped like the stack's (lib/constructs/job-queue.ts). */
export async function createTestQueue(client: SQSClient, opts: { visibilityTimeoutSeconds: number; maxReceiveCount: number }): Promise<TestQueue> {
  const name = `svc-test-${randomUUID()}`;
  const dlq = await client.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const dlqArn = (await client.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn;
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(opts.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: opts.maxReceiveCount }),
      },
    }),
  );
  const queueUrl = queue.QueueUrl!;
  const deadLetterQueueUrl = dlq.QueueUrl!;
  return {
    queueUrl,
    deadLetterQueueUrl,
    async drop() {
      for (const url of [queueUrl, deadLetterQueueUrl]) await client.send(new DeleteQueueCommand({ QueueUrl: url }));
    },
  };
}
