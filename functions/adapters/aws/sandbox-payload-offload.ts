import { randomUUID } from 'node:crypto';
import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { RunRequest } from '../../ports.js';
import { INLINE_PAYLOAD_BYTES, type SandboxEvent, type SandboxInvoke } from './sandbox-protocol.js';
import { parseBufferedEvents, sandboxFailure } from './sandbox-wire.js';

/** Where a job's sandbox payloads live; the bucket's lifecycle rule expires what a crash left (lib/constructs/data.ts). */
export const SANDBOX_PAYLOAD_PREFIX = '_sandbox/';

/** The largest stored answer the worker reads back (it holds the whole answer in memory to parse it). */
export const MAX_STORED_ANSWER_BYTES = 32 * 1024 * 1024;

/** The sandbox fetches the request when it starts: a cold start and retries fit in this. */
const REQUEST_URL_SECONDS = 15 * 60;
/** The answer is PUT when the job ends: its timeout, plus room to get the outcome out. */
const ANSWER_URL_MARGIN_SECONDS = 5 * 60;

/**
 * Lambda takes at most 6 MB per invocation payload and per buffered answer. Each request gets a
 * presigned PUT URL of one object under the job (`resultUrl`), where the sandbox puts an answer
 * past that size and answers `stored`; a request past that size is itself put under the job, and
 * the sandbox gets a stub naming the job and tenant with a presigned GET URL of it (`requestUrl`).
 * The sandbox has no credentials: the URLs are its only way to the bucket, each good for one
 * object. What was stored is deleted once the run is over; the bucket's lifecycle rule expires
 * what a crash left behind.
 */
export function withPayloadOffload(invoke: SandboxInvoke, s3: S3Client, bucketName: string): SandboxInvoke {
  return async function* offloaded(request, signal): AsyncGenerator<SandboxEvent> {
    const base = `${SANDBOX_PAYLOAD_PREFIX}${request.jobId}/${randomUUID()}`;
    const answerKey = `${base}/answer.json`;
    const answerSeconds = Math.ceil(request.timeoutMs / 1000) + ANSWER_URL_MARGIN_SECONDS;
    const full: RunRequest = { ...request, resultUrl: await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucketName, Key: answerKey }), { expiresIn: answerSeconds }) };
    const body = JSON.stringify(full);
    const written: string[] = [];
    let sent = full;
    try {
      if (Buffer.byteLength(body) > INLINE_PAYLOAD_BYTES) {
        const requestKey = `${base}/request.json`;
        written.push(requestKey);
        await s3.send(new PutObjectCommand({ Bucket: bucketName, Key: requestKey, Body: body, ContentType: 'application/json' }), { abortSignal: signal });
        sent = requestStub(full, await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucketName, Key: requestKey }), { expiresIn: REQUEST_URL_SECONDS }));
      }
      for await (const event of invoke(sent, signal)) {
        if (event.type !== 'stored') {
          yield event;
          continue;
        }
        written.push(answerKey);
        yield* await storedAnswer(s3, bucketName, answerKey, signal);
        return;
      }
    } finally {
      if (written.length) {
        await s3.send(new DeleteObjectsCommand({ Bucket: bucketName, Delete: { Objects: written.map((Key) => ({ Key })), Quiet: true } })).catch(() => undefined);
      }
    }
  };
}

/**
 * What goes to Lambda in place of a request too large for it: the job, its language (which
 * sandbox), its workspace and run-as user (the tenant), and where the request is. The sandbox
 * checks that the fetched request names the same job and tenant.
 */
export function requestStub(request: RunRequest, requestUrl: string): RunRequest {
  const user = request.env.OV_USERNAME;
  return {
    jobId: request.jobId,
    workspaceId: request.workspaceId,
    language: request.language,
    scriptHash: request.scriptHash,
    content: '',
    args: {},
    schema: { type: 'object', properties: {}, required: [] },
    env: user === undefined ? {} : { OV_USERNAME: user },
    timeoutMs: request.timeoutMs,
    maxOutputBytes: request.maxOutputBytes,
    requestUrl,
  };
}

/** The events the sandbox stored, checked as strictly as an answer that came inline. */
async function storedAnswer(s3: S3Client, bucketName: string, key: string, signal: AbortSignal): Promise<SandboxEvent[]> {
  let text: string;
  try {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucketName, Key: key }), { abortSignal: signal });
    if ((object.ContentLength ?? 0) > MAX_STORED_ANSWER_BYTES) {
      object.Body?.transformToWebStream().cancel().catch(() => undefined);
      return [outcomeOf(sandboxFailure(`the job's answer is ${megabytes(object.ContentLength ?? 0)} MB, more than the ${megabytes(MAX_STORED_ANSWER_BYTES)} MB a worker reads back`))];
    }
    text = (await object.Body?.transformToString('utf-8')) ?? '';
  } catch (error) {
    return [outcomeOf(sandboxFailure(`the sandbox's stored answer could not be read: ${error instanceof Error ? error.message : String(error)}`))];
  }
  let events: SandboxEvent[];
  try {
    events = parseBufferedEvents(text);
  } catch (error) {
    return [outcomeOf(sandboxFailure(error instanceof Error ? error.message : String(error)))];
  }
  const last = events.at(-1);
  if (last?.type !== 'outcome' || events.some((e) => e.type === 'stored')) return [outcomeOf(sandboxFailure('the sandbox stored an answer that does not end with its outcome'))];
  return events;
}

const outcomeOf = (outcome: ReturnType<typeof sandboxFailure>): SandboxEvent => ({ type: 'outcome', outcome });
const megabytes = (bytes: number) => Math.ceil(bytes / (1024 * 1024));
