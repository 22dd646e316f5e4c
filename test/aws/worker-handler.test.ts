import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSBatchResponse } from 'aws-lambda';
import { DynamoStore } from '../../functions/adapters/aws/dynamo-store.js';
import type { SandboxInvoke } from '../../functions/adapters/aws/sandbox-protocol.js';
import { SqsJobQueue } from '../../functions/adapters/aws/sqs-job-queue.js';
import { createWorkerHandler } from '../../functions/handlers/worker.js';
import type { Job } from '../../functions/ports.js';
import { aJob, aScriptVersion, uid } from '../contract/store-fixtures.js';
import { startAwsEmulators, type AwsEmulators } from './aws-emulators.js';
import { sharedEndpoints } from './shared-emulator-endpoints.js';
import { dynamoClient } from './dynamodb-local.js';
import { lambdaContext } from './lambda-context.js';
import { sqsEvent } from './sqs-events.js';
import { sqsClient } from './sqs-local.js';

/**
 * The worker handler as the SQS event source calls it, on DynamoDB Local and local-aws-sqs, with
 * a sandbox that records what it was asked to run. SQS delivers at least once: duplicates and
 * redeliveries must neither run a job twice nor rewrite a finished one.
 */

let emulators: AwsEmulators;
let dynamo: DynamoDBClient;
let sqs: SQSClient;
let store: DynamoStore;
let queue: SqsJobQueue;
let queueArn: string;

/** Job ids in the order the sandbox started them. */
const runs: string[] = [];
/** The OV_JOB_ATTEMPT each run was given, by job id. */
const attemptSeen = new Map<string, string | undefined>();
/** How long a run takes unless it is aborted (a canceled job). */
let runMs = 300;
const sandbox: SandboxInvoke = async function* (request, signal) {
  runs.push(request.jobId);
  attemptSeen.set(request.jobId, request.env.OV_JOB_ATTEMPT);
  yield { type: 'log', text: `running ${request.jobId}\n` };
  await sleep(runMs, undefined, { signal }).catch(() => undefined);
  yield { type: 'outcome', outcome: { ok: true, result: `done ${runs.length}`, streamed: false } };
};
const handler = createWorkerHandler(() => sandbox);

beforeAll(async () => {
  emulators = await startAwsEmulators({ shared: await sharedEndpoints() });
  // The worker Lambda's environment, as the stack sets it (the signing key given directly).
  Object.assign(process.env, emulators.env, { SIGNING_KEY_HEX: randomBytes(32).toString('hex') });
  dynamo = dynamoClient(emulators.env.AWS_ENDPOINT_URL_DYNAMODB);
  sqs = sqsClient(emulators.env.AWS_ENDPOINT_URL_SQS);
  store = new DynamoStore({ client: dynamo, tableName: emulators.env.TABLE_NAME });
  queue = new SqsJobQueue({ client: sqs, queueUrl: emulators.queueUrl });
  queueArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: emulators.queueUrl, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
}, 120_000);

afterAll(async () => {
  dynamo?.destroy();
  sqs?.destroy();
  await emulators?.stop();
});

async function queuedJob(): Promise<Job> {
  const ws = uid('ws');
  const script = aScriptVersion(ws, 'f/jobs/run');
  await store.insertScriptVersion(script, null);
  const job = aJob(ws, { script_hash: script.hash, script_path: script.path, language: 'bun' });
  await store.insertJob(job);
  return job;
}

/** Exactly `count` messages (short polls: local-aws-sqs holds a long poll open to fill a batch). */
async function receive(count: number): Promise<Message[]> {
  const messages: Message[] = [];
  for (let attempt = 0; messages.length < count && attempt < 50; attempt++) {
    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: emulators.queueUrl, MaxNumberOfMessages: count - messages.length, AttributeNames: ['All'] }));
    messages.push(...(received.Messages ?? []));
    if (messages.length < count) await sleep(50);
  }
  expect(messages).toHaveLength(count);
  return messages;
}

async function deliver(messages: Message[]): Promise<SQSBatchResponse> {
  return (await handler(sqsEvent(messages, queueArn), lambdaContext('svc-worker', 900_000))) as SQSBatchResponse;
}

const runsOf = (job: Job) => runs.filter((id) => id === job.id).length;

describe('worker handler: at-least-once delivery', () => {
  it('runs a job delivered twice in one batch once, and reports both records done', async () => {
    const job = await queuedJob();
    await queue.enqueue(job);
    await queue.enqueue(job);

    expect(await deliver(await receive(2))).toEqual({ batchItemFailures: [] });
    expect(runsOf(job)).toBe(1);
    expect(await store.getJob(job.workspace_id, job.id)).toMatchObject({ status: 'success', success: true, attempts: 1, logs: `running ${job.id}\n` });
  });

  it('neither re-runs nor rewrites a finished job when its message comes again', async () => {
    const job = await queuedJob();
    await queue.enqueue(job);
    await deliver(await receive(1));
    const finished = await store.getJob(job.workspace_id, job.id);
    expect(finished?.status).toBe('success');

    // The same message again, as after a lost delete or a visibility timeout.
    await queue.enqueue(job);
    // Reported done, so SQS deletes it instead of retrying it into the DLQ.
    expect(await deliver(await receive(1))).toEqual({ batchItemFailures: [] });
    expect(runsOf(job)).toBe(1);
    expect(await store.getJob(job.workspace_id, job.id)).toEqual(finished);
  });

  it('keeps a cancellation made while the job ran, and stops the run', async () => {
    const job = await queuedJob();
    await queue.enqueue(job);
    runMs = 10_000;
    const started = Date.now();
    const delivery = deliver(await receive(1));
    while ((await store.getJob(job.workspace_id, job.id))?.status !== 'running') await sleep(20);
    // What the api Lambda's cancel endpoint writes, from another process.
    const canceled = { status: 'canceled' as const, result: { error: { name: 'Canceled', message: 'canceled by test' } }, logs: '' };
    expect(await store.completeJob(job.id, canceled, new Date().toISOString())).toBe(true);

    expect(await delivery).toEqual({ batchItemFailures: [] });
    runMs = 300;
    // The worker saw the cancel by polling the table, well before the run would have ended.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await store.getJob(job.workspace_id, job.id)).toMatchObject({ status: 'canceled', result: canceled.result, success: false });

    await queue.enqueue(job);
    await deliver(await receive(1));
    expect(runsOf(job)).toBe(1);
    expect((await store.getJob(job.workspace_id, job.id))?.status).toBe('canceled');
  });

  it('runs a job again when its worker died mid-run and SQS redelivers the message', async () => {
    const job = await queuedJob();
    // A worker claimed it long ago and died (timeout, out of memory): running, its lease long over.
    await store.claimJob(job.id, '2020-01-01T00:00:00.000Z', '2020-01-01T00:15:00.000Z');
    await queue.enqueue(job);

    expect(await deliver(await receive(1))).toEqual({ batchItemFailures: [] });
    expect(runsOf(job)).toBe(1);
    expect(await store.getJob(job.workspace_id, job.id)).toMatchObject({ status: 'success', attempts: 2 });
    // The re-run knows it is one.
    expect(attemptSeen.get(job.id)).toBe('2');
  });

  it('leaves a job alone while its worker still holds the lease', async () => {
    const job = await queuedJob();
    await store.claimJob(job.id, new Date().toISOString(), '2100-01-01T00:00:00.000Z');
    await queue.enqueue(job);

    expect(await deliver(await receive(1))).toEqual({ batchItemFailures: [] });
    expect(runsOf(job)).toBe(0);
    expect(await store.getJob(job.workspace_id, job.id)).toMatchObject({ status: 'running', attempts: 1 });
  });

  it('fails only the record it cannot process, so SQS retries that one alone', async () => {
    const job = await queuedJob();
    await sqs.send(new SendMessageCommand({ QueueUrl: emulators.queueUrl, MessageBody: 'not a job reference' }));
    await queue.enqueue(job);
    const messages = await receive(2);
    const bad = messages.find((m) => m.Body === 'not a job reference')!;

    expect(await deliver(messages)).toEqual({ batchItemFailures: [{ itemIdentifier: bad.MessageId }] });
    expect((await store.getJob(job.workspace_id, job.id))?.status).toBe('success');
  });
});
