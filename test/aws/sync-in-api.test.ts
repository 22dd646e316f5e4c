import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { JobDispatcher } from '../../functions/adapters/aws/job-outbox.js';
import { inProcessInvoke } from '../../functions/adapters/aws/sandbox-in-process.js';
import type { SandboxEvent, SandboxInvoke } from '../../functions/adapters/aws/sandbox-protocol.js';
import { SqsJobQueue, decodeJobMessage } from '../../functions/adapters/aws/sqs-job-queue.js';
import { STUCK_JOB_ERRORS } from '../../functions/core/runs/stuck-jobs.js';
import { createJobDispatcherHandler } from '../../functions/handlers/job-dispatcher.js';
import { closeSandbox, setSandboxWorkDir } from '../../functions/handlers/sandbox.js';
import { BINARY_MEDIA_TYPES, proxyEvent, sendStreamedResponse } from './api-gateway-proxy.js';
import { startAwsEmulators, type AwsEmulators } from './aws-emulators.js';
import { sharedEndpoints } from './shared-emulator-endpoints.js';
import { dynamoClient } from './dynamodb-local.js';
import { startStreamEventSource, streamsClient, type StreamEventSource } from './dynamodb-stream-event-source.js';
import { lambdaContext } from './lambda-context.js';
import { installLambdaStreamingGlobals, RuntimeResponseStream, type StreamingHandler } from './lambda-streaming-runtime.js';
import { sqsClient } from './sqs-local.js';

/**
 * Billed once: a sync webhook's job runs in the api function that holds the request, not in the
 * worker. On DynamoDB Local (with its stream feeding the real job dispatcher) and local-aws-sqs,
 * with NO worker consuming the jobs queue: the real api handler behind a one-machine API Gateway,
 * its sandbox the real sandbox handlers run in this process.
 */

const TOKEN = `admin-${randomBytes(12).toString('hex')}`;
const WS = 'main';
/** The api function's timeout in the stack's default (apiTimeoutSeconds). */
const API_TIMEOUT_MS = 900_000;
const SYNC_MAX_WAIT_SECONDS = 4;

let emulators: AwsEmulators;
let dynamo: DynamoDBClient;
let sqs: SQSClient;
let source: StreamEventSource;
let server: Server;
let url: string;
let sandboxDir: string;
/** The invocation of each request that named one in `x-test-invocation`: it settles when the function would end. */
const invocations = new Map<string, Promise<unknown>>();
/** Sandbox runs of scripts whose content says HANG never report: the function running them "dies" with them. */
const hanging = new Set<() => void>();
/** Sandbox runs of scripts whose content says HOLD stop reporting after their first log line until the test lets them go: a job as long as the test needs, however slow the machine. */
const held = new Set<() => void>();

beforeAll(async () => {
  emulators = await startAwsEmulators({ shared: await sharedEndpoints() });
  dynamo = dynamoClient(emulators.env.AWS_ENDPOINT_URL_DYNAMODB);
  sqs = sqsClient(emulators.env.AWS_ENDPOINT_URL_SQS);
  Object.assign(process.env, emulators.env, {
    SIGNING_KEY_HEX: randomBytes(32).toString('hex'),
    SVC_ADMIN_TOKEN: TOKEN,
    SYNC_MAX_WAIT_SECONDS: String(SYNC_MAX_WAIT_SECONDS),
    JOB_TIMEOUT_SECONDS: '600',
    API_BASE_URL: 'http://127.0.0.1:1',
  });
  // The dispatcher as the stack wires it: stored `queued` jobs reach the jobs queue, which nothing consumes.
  const dispatcher = new JobDispatcher({ scripts: new SqsJobQueue({ client: sqs, queueUrl: emulators.queueUrl }), sfn: new SFNClient({}), stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:unused' });
  source = await startStreamEventSource({ dynamo, streams: streamsClient(emulators.env.AWS_ENDPOINT_URL_DYNAMODB), tableName: emulators.env.TABLE_NAME, handler: createJobDispatcherHandler(() => dispatcher), retryAttempts: 5 });

  sandboxDir = mkdtempSync(join(tmpdir(), 'svc-sandbox-'));
  chmodSync(sandboxDir, 0o711);
  setSandboxWorkDir(sandboxDir);
  const real = inProcessInvoke();
  const invoke: SandboxInvoke = (request, signal) => {
    if (request.content.includes('HANG')) return neverReports(signal);
    return request.content.includes('HOLD') ? heldAfterFirstLog(real(request, signal)) : real(request, signal);
  };
  installLambdaStreamingGlobals();
  const { createApiHandler } = await import('../../functions/handlers/api.js');
  const handler = createApiHandler(() => invoke) as unknown as StreamingHandler;

  server = createServer((req, res) => {
    void (async () => {
      const event = proxyEvent(req, await readBody(req), { stage: 'test', binaryMediaTypes: BINARY_MEDIA_TYPES });
      const stream = new RuntimeResponseStream();
      // The function's timeout, shorter when a test says so.
      const timeoutMs = Number(req.headers['x-test-function-timeout-ms'] ?? API_TIMEOUT_MS);
      const invocation = Promise.resolve().then(() => handler(event, stream, lambdaContext('svc-api', timeoutMs)));
      invocation.then(
        () => void (stream.writableEnded || stream.end()),
        (error: unknown) => stream.destroy(error instanceof Error ? error : new Error(String(error))),
      );
      const tag = req.headers['x-test-invocation'];
      if (typeof tag === 'string') invocations.set(tag, invocation);
      await sendStreamedResponse(stream, res);
    })().catch((error: unknown) => res.destroy(error instanceof Error ? error : new Error(String(error))));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  for (const release of [...hanging, ...held]) release();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await source?.stop();
  dynamo?.destroy();
  sqs?.destroy();
  await emulators?.stop();
  // Its job slots are mounts under sandboxDir: unmounted first, or the removal meets EBUSY.
  await closeSandbox();
  if (sandboxDir) rmSync(sandboxDir, { recursive: true, force: true });
});

async function* neverReports(signal: AbortSignal): AsyncGenerator<SandboxEvent> {
  await new Promise<void>((resolve) => {
    hanging.add(resolve);
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  yield { type: 'outcome', outcome: { ok: false, error: { name: 'Gone', message: 'the test let go of the run' } } };
}

async function* heldAfterFirstLog(events: AsyncIterable<SandboxEvent>): AsyncGenerator<SandboxEvent> {
  let logged = false;
  for await (const event of events) {
    yield event;
    if (event.type === 'log' && !logged) {
      logged = true;
      await new Promise<void>((resolve) => held.add(resolve));
    }
  }
}

function api(path: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(`${url}/api/w/${WS}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...init.headers } });
}

async function createScript(path: string, content: string, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await api('/scripts/create', { method: 'POST', body: JSON.stringify({ path, language: 'bash', content, ...extra }) });
  expect(res.status, await res.clone().text()).toBe(201);
}

async function getJob(id: string): Promise<Record<string, any>> {
  const res = await api(`/jobs_u/get/${id}`);
  expect(res.status).toBe(200);
  return res.json();
}

/** The jobs of one script, newest first: a sync answer does not name its job. */
async function jobsOf(path: string): Promise<Array<Record<string, any>>> {
  return (await api(`/jobs/list?script_path_exact=${encodeURIComponent(path)}`)).json();
}

/** Every message on the jobs queue now (short polls: local-aws-sqs holds long polls open). */
async function queuedMessages(): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: emulators.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 600 }));
    if (Messages.length === 0) return ids;
    ids.push(...Messages.map((m) => decodeJobMessage(m.Body!).jobId));
  }
}

async function until<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('a sync webhook runs in the api function', () => {
  it('answers with no worker consuming the queue, stores logs and result, and sends nothing to the queue', async () => {
    await createScript('u/admin/greet', 'name="$1"\necho "greeting $name"\necho "hello $name"');
    const res = await api('/jobs/run_wait_result/p/u/admin/greet', { method: 'POST', body: JSON.stringify({ name: 'Ada' }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toBe('hello Ada');

    const [listed] = await jobsOf('u/admin/greet');
    const job = await getJob(listed.id);
    expect(job).toMatchObject({ status: 'success', result: 'hello Ada', attempts: 1 });
    expect(job.logs).toContain('greeting Ada');

    // An async run of the same script goes the queue's way, so the dispatcher is alive: its job
    // reaches the queue, the sync one never does.
    const asyncRes = await api('/jobs/run/p/u/admin/greet', { method: 'POST', body: JSON.stringify({ name: 'Bo' }) });
    expect(asyncRes.status).toBe(201);
    const asyncId = await asyncRes.text();
    const sent = await until('the async job on the queue', async () => {
      const ids = await queuedMessages();
      return ids.includes(asyncId) ? ids : undefined;
    });
    expect(sent).not.toContain(job.id);
    expect((await getJob(asyncId)).status).toBe('queued');
  });

  it('writes logs while the job runs, and keeps the invocation until a job longer than the sync wait is stored, after answering 504', async () => {
    await createScript('u/admin/slow', 'echo "started"\nsleep 1\necho "finished" # HOLD');
    const pending = api('/jobs/run_wait_result/p/u/admin/slow', { method: 'POST', body: '{}', headers: { 'x-test-invocation': 'slow' } });
    // Live: the running job's log is in the table before the script ends, as the worker writes it.
    const running = await until('the running job with its first log line', async () => {
      const [listed] = await jobsOf('u/admin/slow');
      if (!listed || listed.status !== 'running') return undefined;
      const job = await getJob(listed.id);
      return job.status === 'running' && String(job.logs).includes('started') ? job : undefined;
    });
    expect(running.logs).not.toContain('finished');
    const res = await pending;
    expect(res.status).toBe(504);
    const { error } = await res.json();
    expect(error.code).toBe('sync_wait_timeout');
    expect((await getJob(error.job_id)).status).toBe('running');
    // Answered, yet the job goes on in the same invocation, which ends only once it is recorded.
    for (const release of held) release();
    await invocations.get('slow');
    const job = await getJob(error.job_id);
    expect(job).toMatchObject({ status: 'success', result: 'finished' });
    expect(job.logs).toContain('started');
    expect(await queuedMessages()).not.toContain(error.job_id);
  });

  it('scrubs a delete_after_use job after answering', async () => {
    await createScript('u/admin/secretive', 'card="$1"\necho "card $card"\necho "ok ${card: -4}"', { delete_after_use: true });
    const res = await api('/jobs/run_wait_result/p/u/admin/secretive', { method: 'POST', body: JSON.stringify({ card: '4111111111111111' }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toBe('ok 1111');
    const [listed] = await jobsOf('u/admin/secretive');
    const job = await getJob(listed.id);
    expect(job.status).toBe('success');
    expect(JSON.stringify([job.logs, job.args, job.result])).not.toContain('4111');
  });

  it('sends a job the invocation cannot hold to its end through the queue', async () => {
    // 60 s left in the function, a 600 s job timeout: the api stores it queued for the worker.
    await createScript('u/admin/long', 'echo "never run here"');
    const res = await api('/jobs/run_wait_result/p/u/admin/long', { method: 'POST', body: '{}', headers: { 'x-test-function-timeout-ms': '60000' } });
    expect(res.status).toBe(504);
    const { error } = await res.json();
    expect((await getJob(error.job_id)).status).toBe('queued');
    await until('the job on the queue', async () => ((await queuedMessages()).includes(error.job_id) ? true : undefined));
  });

  it('leaves a job whose api invocation died running, and the reaper fails it with the reason', async () => {
    await createScript('u/admin/doomed', 'echo HANG');
    const pending = api('/jobs/run_wait_result/p/u/admin/doomed', { method: 'POST', body: '{}' });
    // Stored running before its code ran, and never queued.
    const job = await until('the running job', async () => (await jobsOf('u/admin/doomed')).find((j) => j.status === 'running'));
    expect(await queuedMessages()).not.toContain(job.id);

    // As if the function were gone (its run never reports): past the reaper's running limit, the job is failed.
    process.env.REAP_QUEUED_AFTER_SECONDS = String(6 * 3600);
    process.env.REAP_RUNNING_AFTER_SECONDS = '1';
    await sleep(1_500);
    const { handler: reaper } = await import('../../functions/handlers/reaper.js');
    const report = await reaper();
    expect(report.workerLost).toBeGreaterThanOrEqual(1);
    expect((await getJob(job.id))).toMatchObject({ status: 'failed', result: { error: { name: STUCK_JOB_ERRORS.workerLost } } });

    for (const release of [...hanging, ...held]) release();
    await (await pending).arrayBuffer();
  });
});
