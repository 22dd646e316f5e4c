import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChangeMessageVisibilityCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamEvent, SQSBatchResponse } from 'aws-lambda';
import { DynamoStore } from '../../functions/adapters/aws/dynamo-store.js';
import { JobDispatcher, TableStreamJobQueue } from '../../functions/adapters/aws/job-outbox.js';
import { SqsJobQueue } from '../../functions/adapters/aws/sqs-job-queue.js';
import { executionName } from '../../functions/adapters/aws/step-functions-flow-runner.js';
import { STUCK_JOB_ERRORS } from '../../functions/core/runs/stuck-jobs.js';
import { createDeadLettersHandler } from '../../functions/handlers/dead-letters.js';
import { createJobDispatcherHandler } from '../../functions/handlers/job-dispatcher.js';
import { handler as reaperHandler } from '../../functions/handlers/reaper.js';
import type { Job, User, Workspace } from '../../functions/ports.js';
import { aJob, aScriptVersion, aUser, aWorkspace, anEntity, FAR_FUTURE, uid } from '../contract/store-fixtures.js';
import { handlerJobId } from '../../functions/core/triggers/schedule-handlers.js';
import { errorHandlerJobId } from '../../functions/core/workspace/workspace-error-handler.js';
import { startAwsEmulators, type AwsEmulators } from './aws-emulators.js';
import { sharedEndpoints } from './shared-emulator-endpoints.js';
import { dynamoClient } from './dynamodb-local.js';
import { startStreamEventSource, streamsClient, type StreamEventSource } from './dynamodb-stream-event-source.js';
import { startFlowRunnerLocal, type FlowRunnerLocal } from './flow-runner-local.js';
import { lambdaContext } from './lambda-context.js';
import { sqsEvent } from './sqs-events.js';
import { sqsClient } from './sqs-local.js';

/**
 * No job is lost or stuck, on DynamoDB Local (with its stream), local-aws-sqs and the Step
 * Functions emulator: stored jobs reach the queue or their flow's execution through the table's
 * stream (the dispatcher), a job the queue gave up on is failed by the dead-letter consumer, and
 * the reaper fails jobs queued or running far past their deadlines.
 */

let emulators: AwsEmulators;
let dynamo: DynamoDBClient;
let sqs: SQSClient;
let store: DynamoStore;
let flows: FlowRunnerLocal;
let source: StreamEventSource;
let dispatcher: JobDispatcher;
/** Makes the next `failNext` dispatches throw, as an SQS or Step Functions outage would. */
let failNext = 0;
const dispatchAttempts: string[] = [];

beforeAll(async () => {
  emulators = await startAwsEmulators({ shared: await sharedEndpoints() });
  dynamo = dynamoClient(emulators.env.AWS_ENDPOINT_URL_DYNAMODB);
  sqs = sqsClient(emulators.env.AWS_ENDPOINT_URL_SQS);
  // Flows end at once: this file is about getting them started.
  flows = await startFlowRunnerLocal({ sqs, queueUrl: emulators.queueUrl, flowRunner: async () => ({ action: 'done', status: 'success' }), stepTimeoutSeconds: 60 });
  Object.assign(process.env, emulators.env, flows.env, { SIGNING_KEY_HEX: randomBytes(32).toString('hex') });
  store = new DynamoStore({ client: dynamo, tableName: emulators.env.TABLE_NAME });
  const real = new JobDispatcher({ scripts: new SqsJobQueue({ client: sqs, queueUrl: emulators.queueUrl }), sfn: new SFNClient({}), stateMachineArn: flows.stateMachineArn });
  dispatcher = Object.assign(Object.create(real) as JobDispatcher, {
    dispatch: async (job: Parameters<JobDispatcher['dispatch']>[0]) => {
      dispatchAttempts.push(job.id);
      if (failNext > 0 && failNext--) throw new Error('SQS is unavailable');
      return real.dispatch(job);
    },
  });
  const handler = createJobDispatcherHandler(() => dispatcher);
  source = await startStreamEventSource({ dynamo, streams: streamsClient(emulators.env.AWS_ENDPOINT_URL_DYNAMODB), tableName: emulators.env.TABLE_NAME, handler, retryAttempts: 5 });
}, 120_000);

afterAll(async () => {
  await source?.stop();
  await flows?.stop();
  dynamo?.destroy();
  sqs?.destroy();
  await emulators?.stop();
});

/** What the api does to run a script: the core stores the job and "enqueues" it, which on AWS writes nothing more. */
async function acceptJob(overrides: Partial<Job> = {}): Promise<Job> {
  const job = aJob(uid('ws'), { created_at: new Date().toISOString(), ...overrides });
  await store.insertJob(job);
  await new TableStreamJobQueue().enqueue();
  return job;
}

/** Every message on `queueUrl` now (short polls: local-aws-sqs holds long polls open). */
async function drainQueue(queueUrl: string, atLeast = 0): Promise<Message[]> {
  const messages: Message[] = [];
  for (let empty = 0; empty < 3 || messages.length < atLeast; ) {
    const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, AttributeNames: ['All'], VisibilityTimeout: 30 }));
    if (r.Messages?.length) messages.push(...r.Messages);
    else if (++empty > 100) break;
    else await sleep(30);
  }
  return messages;
}

const jobIdsOf = (messages: Message[]) => messages.map((m) => JSON.parse(m.Body!).jobId as string);

describe('dispatcher: the table stream is the jobs outbox', () => {
  it('sends a stored script job to the jobs queue with nothing but the insert: a crash right after it strands nothing', async () => {
    const job = await acceptJob();
    await source.drain();
    const messages = await drainQueue(emulators.queueUrl, 1);
    expect(jobIdsOf(messages)).toEqual([job.id]);
    expect(JSON.parse(messages[0].Body!)).toEqual({ jobId: job.id, workspaceId: job.workspace_id });
  });

  it("sends neither a flow's step jobs (its execution sends them) nor anything for updates of a job", async () => {
    await acceptJob({ kind: 'flowstep', parent_job: 'some-flow', flow_module: 'a', flow_version: 1, script_hash: null });
    const job = await acceptJob();
    await source.drain();
    expect(jobIdsOf(await drainQueue(emulators.queueUrl, 1))).toEqual([job.id]);
    // Claimed, then finished: two MODIFY records, nothing to send.
    await store.claimJob(job.id, new Date().toISOString(), FAR_FUTURE);
    await store.completeJob(job.id, { status: 'success', result: 1, logs: '' }, new Date().toISOString());
    await source.drain();
    expect(await drainQueue(emulators.queueUrl)).toEqual([]);
  });

  it('sends a job held for a concurrency slot only once it is let go, and then once', async () => {
    const held = await acceptJob({ held: true, concurrency_key: 'script/f/x/limited' });
    await source.drain();
    expect(await drainQueue(emulators.queueUrl)).toEqual([]);
    expect(await store.releaseHeldJob(held.id)).toBe(true);
    await source.drain();
    expect(jobIdsOf(await drainQueue(emulators.queueUrl, 1))).toEqual([held.id]);
    // Claimed and finished after that: nothing more is sent.
    await store.claimJob(held.id, new Date().toISOString(), FAR_FUTURE);
    await store.completeJob(held.id, { status: 'success', result: 1, logs: '' }, new Date().toISOString());
    await source.drain();
    expect(await drainQueue(emulators.queueUrl)).toEqual([]);
  });

  it("starts a stored flow job's execution, named after the flow and the job; a record delivered again starts nothing more", async () => {
    const job = await acceptJob({ kind: 'flow', script_path: 'f/refunds/approve', script_hash: null, flow_version: 1 });
    await source.drain();
    const named = [...flows.executions.values()].filter((e) => e.name === executionName(job.script_path, job.id));
    expect(named).toHaveLength(1);
    expect(JSON.parse(named[0].input)).toEqual({ workspaceId: job.workspace_id, flowJobId: job.id, events: 0 });
    expect(await drainQueue(emulators.queueUrl)).toEqual([]);

    // The same INSERT record again, as after a retried batch.
    const record = { eventName: 'INSERT', dynamodb: { SequenceNumber: '1', NewImage: { entity: { S: 'job' }, status: { S: 'queued' }, parent_job: { NULL: true }, id: { S: job.id }, workspace_id: { S: job.workspace_id }, script_path: { S: job.script_path }, kind: { S: 'flow' } } } };
    expect(await createJobDispatcherHandler(() => dispatcher)({ Records: [record] } as DynamoDBStreamEvent)).toEqual({ batchItemFailures: [] });
    expect([...flows.executions.values()].filter((e) => e.name === executionName(job.script_path, job.id))).toHaveLength(1);
  });

  it('retries from the record it could not send, until it is sent', async () => {
    failNext = 2;
    const job = await acceptJob();
    await source.drain();
    expect(dispatchAttempts.filter((id) => id === job.id)).toHaveLength(3);
    expect(jobIdsOf(await drainQueue(emulators.queueUrl, 1))).toEqual([job.id]);
  });
});

describe('dead-letter consumer', () => {
  const deadLetters = createDeadLettersHandler(() => 3);

  /** Receives the job's message without ever finishing it until SQS moves it to the DLQ. */
  async function exhaustDeliveries(job: Job): Promise<Message> {
    await sqs.send(new SendMessageCommand({ QueueUrl: emulators.queueUrl, MessageBody: JSON.stringify({ jobId: job.id, workspaceId: job.workspace_id }) }));
    for (let i = 0; i < 20; i++) {
      const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: emulators.queueUrl, MaxNumberOfMessages: 1, AttributeNames: ['All'] }));
      for (const m of r.Messages ?? []) {
        // A worker that died: the message comes back at once instead of after the visibility timeout.
        await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: emulators.queueUrl, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 }));
      }
      const parked = await sqs.send(new ReceiveMessageCommand({ QueueUrl: emulators.deadLetterQueueUrl, MaxNumberOfMessages: 1, AttributeNames: ['All'] }));
      if (parked.Messages?.length) return parked.Messages[0];
    }
    throw new Error('the message never reached the dead-letter queue');
  }

  it('fails a job whose every delivery failed, saying so, and leaves nothing queued or running', async () => {
    const job = aJob(uid('ws'), { created_at: new Date().toISOString(), logs: '' });
    await store.insertJob(job);
    await store.claimJob(job.id, new Date().toISOString(), FAR_FUTURE);
    const parked = await exhaustDeliveries(job);
    const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: emulators.deadLetterQueueUrl, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;

    const response = (await deadLetters(sqsEvent([parked], dlqArn), lambdaContext('svc-dead-letters', 60_000))) as SQSBatchResponse;
    expect(response).toEqual({ batchItemFailures: [] });
    expect(await store.getJob(job.workspace_id, job.id)).toMatchObject({
      status: 'failed',
      success: false,
      result: { error: { name: STUCK_JOB_ERRORS.undeliverable, message: expect.stringContaining('3 deliveries to a worker failed') } },
    });
  });

  it('keeps the outcome of a job that finished meanwhile, and leaves an unreadable message in the DLQ', async () => {
    const job = aJob(uid('ws'), { created_at: new Date().toISOString() });
    await store.insertJob(job);
    await store.claimJob(job.id, new Date().toISOString(), FAR_FUTURE);
    await store.completeJob(job.id, { status: 'success', result: 'fine', logs: '' }, new Date().toISOString());
    const finished = { MessageId: 'm-1', ReceiptHandle: 'r-1', Body: JSON.stringify({ jobId: job.id, workspaceId: job.workspace_id }) };
    const garbage = { MessageId: 'm-2', ReceiptHandle: 'r-2', Body: 'not a job reference' };

    const response = (await deadLetters(sqsEvent([finished, garbage], 'arn:aws:sqs:us-east-1:000000000000:dlq'), lambdaContext('svc-dead-letters', 60_000))) as SQSBatchResponse;
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-2' }] });
    expect(await store.getJob(job.workspace_id, job.id)).toMatchObject({ status: 'success', result: 'fine' });
  });
});

describe('reaper', () => {
  /** As the stack sets them for the default settings: 6 h queued; 840 s job + 960 s visibility + 300 s. */
  const reapWithDefaultLimits = () => Object.assign(process.env, { REAP_QUEUED_AFTER_SECONDS: String(6 * 3600), REAP_RUNNING_AFTER_SECONDS: '2100' });
  const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

  /** A workspace whose admin may run the script at `handlerPath`, which answers its `job_id`: the handler a failed run calls for. */
  async function workspaceWithHandler(handlerPath: string): Promise<{ ws: Workspace; admin: User }> {
    const ws = aWorkspace();
    await store.createWorkspace(ws);
    const admin = aUser({ username: uid('admin'), is_admin: true });
    await store.createUser(admin);
    await store.insertScriptVersion(aScriptVersion(ws.id, handlerPath, { content: 'export function main(job_id: string) { return job_id }', schema: { type: 'object', properties: { job_id: { type: 'string' } }, required: [] } }), null);
    return { ws, admin };
  }

  /** A run stored failed ('disk full') two minutes ago by a function that stopped right after: nothing counted it or started its handler. */
  async function storedFailedRun(workspaceId: string, overrides: Partial<Job> = {}): Promise<Job> {
    const failed = aJob(workspaceId, { ...overrides, created_at: minutesAgo(3) });
    await store.insertJob(failed);
    await store.completeJob(failed.id, { status: 'failed', result: { error: { name: 'Error', message: 'disk full' } }, logs: '' }, minutesAgo(2));
    return failed;
  }

  it('fails a job queued past the deadline and one running past its worker, and leaves the rest', async () => {
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3600_000).toISOString();
    const lost = aJob(uid('ws'), { created_at: hoursAgo(7) });
    const waiting = aJob(uid('ws'), { created_at: hoursAgo(1) });
    const orphaned = aJob(uid('ws'), { created_at: hoursAgo(2) });
    const working = aJob(uid('ws'), { created_at: hoursAgo(2) });
    for (const j of [lost, waiting, orphaned, working]) await store.insertJob(j);
    await store.claimJob(orphaned.id, hoursAgo(1.5), FAR_FUTURE);
    await store.claimJob(working.id, hoursAgo(0.1), FAR_FUTURE);
    reapWithDefaultLimits();

    const report = await reaperHandler();
    expect(report.neverStarted).toBeGreaterThanOrEqual(1);
    expect(report.workerLost).toBeGreaterThanOrEqual(1);
    expect((await store.getJob(lost.workspace_id, lost.id))?.result).toEqual({ error: { name: STUCK_JOB_ERRORS.neverStarted, message: expect.stringContaining('still queued 360 minutes') } });
    expect((await store.getJob(orphaned.workspace_id, orphaned.id))?.result).toEqual({ error: { name: STUCK_JOB_ERRORS.workerLost, message: expect.stringContaining('still running 35 minutes') } });
    expect((await store.getJob(waiting.workspace_id, waiting.id))?.status).toBe('queued');
    expect((await store.getJob(working.workspace_id, working.id))?.status).toBe('running');
  });

  it('counts a scheduled run a stopped function stored failed but did not count, and starts its on_failure once', async () => {
    const { ws, admin: author } = await workspaceWithHandler('u/ops/alert');
    // The function stored the run's failure and stopped before the schedule counted it.
    const failed = await storedFailedRun(ws.id, { schedule_path: 'u/ops/nightly' });
    const schedule = {
      path: 'u/ops/nightly', schedule: '0 0 3 * * *', timezone: 'UTC', script_path: failed.script_path, is_flow: false, args: {}, enabled: true,
      on_failure: 'u/ops/alert', summary: '', permissioned_as: author.username, permissioned_scopes: null, created_by: author.username,
      last_tick: minutesAgo(3), last_job: failed.id, uncounted_runs: [{ job_id: failed.id, claimed_at: minutesAgo(3) }],
    };
    await store.createEntity(anEntity('schedule', ws.id, 'u/ops/nightly', { value: schedule }));
    reapWithDefaultLimits();

    const report = await reaperHandler();
    expect(report.scheduleRunsCounted).toBeGreaterThanOrEqual(1);
    const alertId = handlerJobId('u/ops/nightly', failed.id, 'on_failure');
    expect(await store.getJob(ws.id, alertId)).toMatchObject({ script_path: 'u/ops/alert', args: { job_id: failed.id, error: { message: 'disk full' }, failed_times: 1 } });
    expect((await store.getEntity('schedule', ws.id, 'u/ops/nightly'))?.value).toMatchObject({ failure_streak: 1, uncounted_runs: [], handlers_due: [] });
    // The next pass finds nothing left to do for it.
    await reaperHandler();
    expect((await store.listJobs({ workspace_id: ws.id, script_path: 'u/ops/alert', limit: 10 })).map((j) => j.id)).toEqual([alertId]);
  });

  it("starts the workspace error handler of a run a stopped function stored failed without it, once", async () => {
    const { ws, admin } = await workspaceWithHandler('u/ops/on_error');
    await store.createEntity(anEntity('error_handler', ws.id, 'error_handler', { value: { path: 'u/ops/on_error', extra_args: {}, permissioned_as: admin.username, permissioned_scopes: null, sweep_from: minutesAgo(10) } }));
    // The function stored the run's failure and stopped before it started the handler.
    const failed = await storedFailedRun(ws.id);
    reapWithDefaultLimits();

    expect((await reaperHandler()).errorHandlersStarted).toBeGreaterThanOrEqual(1);
    const handlerId = errorHandlerJobId(ws.id, failed.id);
    expect(await store.getJob(ws.id, handlerId)).toMatchObject({ script_path: 'u/ops/on_error', trigger: 'error_handler', args: { job_id: failed.id, error: { message: 'disk full' } } });
    await reaperHandler();
    expect((await store.listJobs({ workspace_id: ws.id, script_path: 'u/ops/on_error', limit: 10 })).map((j) => j.id)).toEqual([handlerId]);
  });
});
