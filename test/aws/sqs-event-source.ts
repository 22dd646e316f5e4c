/**
 * Lambda's SQS event source mapping for the worker, on one machine: long-polls the jobs queue,
 * invokes the real worker handler with batches as SQS events, deletes the messages it reports done
 * and leaves the failed ones to SQS (redelivered after the visibility timeout, then moved to the
 * DLQ). Runs as its own process, started by aws-shell-server.ts, so that like the worker Lambda it
 * shares no memory with the api; jobs run through the real sandbox handlers (`inProcessInvoke`).
 *
 * Reads the worker Lambda's environment, plus WORKER_CONCURRENCY (invocations at once) and
 * SANDBOX_WORK_DIR. Exits when told to (SIGTERM) or when the process that started it goes away.
 */
import { DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import { inProcessInvoke } from '../../functions/adapters/aws/sandbox-in-process.js';
import { closeSandbox, setSandboxWorkDir } from '../../functions/handlers/sandbox.js';
import { createWorkerHandler } from '../../functions/handlers/worker.js';
import { lambdaContext } from './lambda-context.js';
import { sqsEvent } from './sqs-events.js';

/** As the stack configures the mapping and the function (lib/constructs/worker.ts). */
const BATCH_SIZE = 5;
const WORKER_TIMEOUT_MS = 900_000;
/** The longest long poll SQS allows. */
const WAIT_SECONDS = 20;

const queueUrl = required('JOBS_QUEUE_URL');
const concurrency = Number(process.env.WORKER_CONCURRENCY || 8);
if (process.env.SANDBOX_WORK_DIR) setSandboxWorkDir(process.env.SANDBOX_WORK_DIR);

const sqs = new SQSClient({});
const handler = createWorkerHandler(() => inProcessInvoke());
const stopping = new AbortController();
const running = new Set<Promise<void>>();

async function pollQueue(): Promise<void> {
  const queueArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn ?? '';
  while (!stopping.signal.aborted) {
    if (running.size >= concurrency) {
      await Promise.race(running);
      continue;
    }
    const batch = await receive(1, WAIT_SECONDS);
    if (batch.length === 0) continue;
    // Whatever else is waiting joins the batch at once (a batching window of 0). One message at a
    // time above: local-aws-sqs holds a long poll open until it can fill the whole batch.
    batch.push(...(await receive(BATCH_SIZE - 1, 0)));
    const invocation = invoke(batch, queueArn).finally(() => running.delete(invocation));
    running.add(invocation);
  }
}

async function receive(max: number, waitSeconds: number): Promise<Message[]> {
  try {
    const received = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: max, WaitTimeSeconds: waitSeconds, AttributeNames: ['All'] }),
      { abortSignal: stopping.signal },
    );
    return received.Messages ?? [];
  } catch (error) {
    if (stopping.signal.aborted) return [];
    log('error', 'receiving from the jobs queue failed', error);
    await new Promise((r) => setTimeout(r, 1_000));
    return [];
  }
}

async function invoke(messages: Message[], queueArn: string): Promise<void> {
  const event = sqsEvent(messages, queueArn);
  let failed: Set<string>;
  try {
    const response = (await handler(event, lambdaContext('svc-worker', WORKER_TIMEOUT_MS))) as SQSBatchResponse;
    failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  } catch (error) {
    // A failed invocation returns the whole batch to the queue.
    log('error', 'the worker invocation failed', error);
    return;
  }
  const done = messages.filter((m) => !failed.has(m.MessageId!));
  if (done.length === 0) return;
  await sqs
    .send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }))
    .catch((error: unknown) => log('error', 'deleting processed messages failed', error));
}

let exiting = false;
async function shutdown(): Promise<void> {
  if (exiting) return;
  exiting = true;
  stopping.abort();
  // Jobs still running are abandoned, as when a worker Lambda is stopped: their warm processes go.
  await closeSandbox().catch(() => undefined);
  sqs.destroy();
  process.exit(0);
}

function log(level: string, msg: string, error: unknown): void {
  console.error(JSON.stringify({ level, msg, error: error instanceof Error ? error.message : String(error) }));
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
// The starting process holds the other end of stdin: end of input means it is gone.
process.stdin.on('end', () => void shutdown()).resume();

pollQueue().catch((error: unknown) => {
  log('error', 'the event source stopped', error);
  process.exit(1);
});
