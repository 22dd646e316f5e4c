import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessInvoke } from '../../functions/adapters/aws/sandbox-in-process.js';
import { requestStub, withPayloadOffload } from '../../functions/adapters/aws/sandbox-payload-offload.js';
import type { SandboxEvent, SandboxInvoke } from '../../functions/adapters/aws/sandbox-protocol.js';
import { closeSandbox, runSandboxed, setSandboxWorkDir } from '../../functions/handlers/sandbox.js';
import type { RunRequest } from '../../functions/ports.js';
import { request } from '../unit/runtime/runtime-helpers.js';
import { createTestBucket, s3Client, startS3, type S3Endpoint } from './s3-local.js';

/**
 * Sandbox payloads past Lambda's 6 MB go through the bucket (sandbox-payload-offload.ts and
 * sandbox-payload-fetch.ts): what each side checks, and that nothing is left behind. The whole
 * path with real jobs is test/http/sandbox-payloads.test.ts on the http-aws tier.
 */

let s3: S3Endpoint;
let client: S3Client;
let bucket: Awaited<ReturnType<typeof createTestBucket>>;
const workDir = mkdtempSync(join(tmpdir(), 'svc-offload-'));

beforeAll(async () => {
  setSandboxWorkDir(workDir);
  s3 = await startS3();
  client = s3Client(s3.endpoint);
  bucket = await createTestBucket(client);
}, 60_000);

afterAll(async () => {
  await closeSandbox();
  await bucket?.drop();
  client?.destroy();
  await s3?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

const MB = 1024 * 1024;

async function collect(events: AsyncIterable<SandboxEvent>): Promise<SandboxEvent[]> {
  const all: SandboxEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

async function keysUnder(prefix: string): Promise<string[]> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket.bucketName, Prefix: prefix }));
  return (listed.Contents ?? []).map((o) => o.Key!);
}

/** Runs the Node sandbox's own handler logic on a payload, as the Lambda would. */
async function sandboxAnswer(payload: unknown): Promise<SandboxEvent[]> {
  const events: SandboxEvent[] = [];
  await runSandboxed(payload, (event) => events.push(event), new AbortController().signal);
  return events;
}

async function presignedRequest(r: RunRequest): Promise<string> {
  const key = `_sandbox/${r.jobId}/test/request.json`;
  await client.send(new PutObjectCommand({ Bucket: bucket.bucketName, Key: key, Body: JSON.stringify(r) }));
  return getSignedUrl(client, new GetObjectCommand({ Bucket: bucket.bucketName, Key: key }), { expiresIn: 60 });
}

describe('sandbox payloads past 6 MB', () => {
  it('sends a stub naming only the job and tenant, and the sandbox runs the whole request it points to', async () => {
    const big = 'x'.repeat(7 * MB);
    const job = request('bun', 'export function main(text: string) { return text.length; }', {
      jobId: 'job-big-arg',
      args: { text: big },
      schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      env: { OV_USERNAME: 'alice', OV_TOKEN: 'secret-token' },
    });
    const seen: RunRequest[] = [];
    const recording: SandboxInvoke = (sent, signal) => {
      seen.push(sent);
      return inProcessInvoke()(sent, signal);
    };
    const events = await collect(withPayloadOffload(recording, client, bucket.bucketName)(job, new AbortController().signal));
    expect(events.at(-1)).toEqual({ type: 'outcome', outcome: { ok: true, result: 7 * MB, streamed: false } });
    // What went to Lambda: small, no arguments, no token; the tenant still derivable.
    expect(JSON.stringify(seen[0]).length).toBeLessThan(4096);
    expect(seen[0]).toMatchObject({ jobId: 'job-big-arg', workspaceId: 'ws', language: 'bun', args: {}, content: '', env: { OV_USERNAME: 'alice' } });
    expect(seen[0]!.requestUrl).toMatch(/^http/);
    expect(await keysUnder('_sandbox/job-big-arg/')).toEqual([]);
  });

  it('stores an answer past 6 MB and reads it back whole, leaving nothing behind', async () => {
    const job = request('bun', 'export function main() { return "ab".repeat(3.5 * 1024 * 1024); }', { jobId: 'job-big-result', maxOutputBytes: 16 * MB });
    const answered: string[] = [];
    const recording: SandboxInvoke = async function* (sent, signal) {
      for await (const event of inProcessInvoke()(sent, signal)) yield (answered.push(event.type), event);
    };
    const events = await collect(withPayloadOffload(recording, client, bucket.bucketName)(job, new AbortController().signal));
    // Lambda carried only `stored`; the outcome came from the bucket.
    expect(answered).toEqual(['stored']);
    const last = events.at(-1) as Extract<SandboxEvent, { type: 'outcome' }>;
    expect(last.outcome.ok && (last.outcome.result as string).length).toBe(7 * MB);
    expect(await keysUnder('_sandbox/job-big-result/')).toEqual([]);
  });

  it('refuses a fetched request that names another job or tenant', async () => {
    const other = request('bun', 'export function main() { return 1; }', { jobId: 'job-other', env: { OV_USERNAME: 'mallory' } });
    const url = await presignedRequest(other);
    for (const stub of [
      requestStub({ ...other, jobId: 'job-mine' }, url),
      requestStub({ ...other, env: { OV_USERNAME: 'alice' } }, url),
      requestStub({ ...other, workspaceId: 'elsewhere' }, url),
    ]) {
      expect(await sandboxAnswer(stub)).toEqual([
        { type: 'outcome', outcome: { ok: false, error: { name: 'SandboxError', message: 'the sandbox request fetched from the bucket is not the one this invocation names' } } },
      ]);
    }
    // The same stub for the job it names runs it.
    expect((await sandboxAnswer(requestStub(other, url))).at(-1)).toEqual({ type: 'outcome', outcome: { ok: true, result: 1, streamed: false } });
  });

  it('fails the job with a SandboxError when the stored answer is not a sandbox answer', async () => {
    const job = request('bun', 'export function main() { return 1; }', { jobId: 'job-forged' });
    // A sandbox that stores something else than events and says it stored its answer.
    const forging: SandboxInvoke = async function* (sent) {
      await fetch(sent.resultUrl!, { method: 'PUT', body: '{"events":[{"type":"log","text":"no outcome"}]}' });
      yield { type: 'stored' };
    };
    const events = await collect(withPayloadOffload(forging, client, bucket.bucketName)(job, new AbortController().signal));
    expect(events).toEqual([{ type: 'outcome', outcome: { ok: false, error: { name: 'SandboxError', message: 'the sandbox stored an answer that does not end with its outcome' } } }]);
    expect(await keysUnder('_sandbox/job-forged/')).toEqual([]);
  });
});
