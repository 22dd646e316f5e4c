import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { SqsJobQueue, decodeJobMessage, encodeJobMessage } from '../../functions/adapters/aws/sqs-job-queue.js';
import { aJob, uid } from '../contract/store-fixtures.js';
import { createTestQueue, sqsClient, startSqs, type SqsEndpoint, type TestQueue } from './sqs-local.js';

let sqs: SqsEndpoint;
let client: SQSClient;
let queue: TestQueue;

beforeAll(async () => {
  sqs = await startSqs();
  client = sqsClient(sqs.endpoint);
  queue = await createTestQueue(client, { visibilityTimeoutSeconds: 30, maxReceiveCount: 3 });
});
afterAll(async () => {
  await queue?.drop();
  client?.destroy();
  await sqs?.stop();
});

describe('SqsJobQueue', () => {
  it('sends a reference to the job, not the job', async () => {
    const job = aJob(uid('ws'), { args: { secret: 'not in the message' } });
    await new SqsJobQueue({ client, queueUrl: queue.queueUrl }).enqueue(job);

    const received = await client.send(new ReceiveMessageCommand({ QueueUrl: queue.queueUrl, WaitTimeSeconds: 5, AttributeNames: ['All'], MessageSystemAttributeNames: ['All'] }));
    expect(received.Messages).toHaveLength(1);
    const [message] = received.Messages!;
    expect(decodeJobMessage(message.Body!)).toEqual({ jobId: job.id, workspaceId: job.workspace_id });
    // Its workspace is its message group: SQS takes turns between workspaces (fair queues).
    expect(message.Attributes?.MessageGroupId).toBe(job.workspace_id);
    expect(message.Body).not.toContain('not in the message');
    expect(message.Attributes?.ApproximateReceiveCount).toBe('1');
  });

  it('refuses a message that does not name a job, so it fails its record instead of vanishing', () => {
    expect(decodeJobMessage(encodeJobMessage({ jobId: 'j', workspaceId: 'w' }))).toEqual({ jobId: 'j', workspaceId: 'w' });
    // What a flow's execution sends (statemachines/flow-runner.ts): the same, with its task token.
    expect(decodeJobMessage('{"jobId":"j","workspaceId":"w","taskToken":"AQB8"}')).toEqual({ jobId: 'j', workspaceId: 'w', taskToken: 'AQB8' });
    for (const body of ['', 'not json', 'null', '{"jobId":"j"}', '{"jobId":1,"workspaceId":"w"}', '{"jobId":"j","workspaceId":"w","taskToken":7}', '{"jobId":"j","workspaceId":"w","taskToken":""}']) {
      expect(() => decodeJobMessage(body)).toThrow(/jobs queue message/);
    }
  });
});
