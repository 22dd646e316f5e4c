import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import {
  InvokeCommand,
  InvokeWithResponseStreamCommand,
  type InvocationResponse,
  type InvokeWithResponseStreamResponse,
  type InvokeWithResponseStreamResponseEvent,
  type LambdaClient,
} from '@aws-sdk/client-lambda';
import type { Context } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { createLambdaSandboxRunner, lambdaInvoke } from '../../functions/adapters/aws/lambda-sandbox-runner.js';
import type { SandboxEvent } from '../../functions/adapters/aws/sandbox-protocol.js';
import { closeSandbox, handler, setSandboxWorkDir } from '../../functions/handlers/sandbox.js';
import type { RunOutcome, RunRequest } from '../../functions/ports.js';
import { recorder, request } from '../unit/runtime/runtime-helpers.js';

// lambdaInvoke against a client that answers the way the SDK does: the boundary is the shape of
// InvokeWithResponseStream's EventStream (PayloadChunk..., InvokeComplete) and of Invoke's output.

const FUNCTIONS = { node: 'svc-sandbox-node', python: 'svc-sandbox-python' };
const encoder = new TextEncoder();

type Sent = InvokeCommand | InvokeWithResponseStreamCommand;

/** A client whose `send` records the command and answers with `respond(command)`. */
function fakeClient(respond: (command: Sent) => Promise<InvokeWithResponseStreamResponse | InvocationResponse>) {
  const sent: Sent[] = [];
  const client = {
    send: async (command: Sent) => {
      sent.push(command);
      return respond(command);
    },
  } as unknown as LambdaClient;
  return { client, sent };
}

async function* eventStream(
  chunks: Uint8Array[],
  complete: { ErrorCode?: string; ErrorDetails?: string } = {},
): AsyncGenerator<InvokeWithResponseStreamResponseEvent> {
  for (const chunk of chunks) yield { PayloadChunk: { Payload: chunk } };
  yield { InvokeComplete: complete };
}

function streamingClient(chunks: Uint8Array[], complete?: { ErrorCode?: string; ErrorDetails?: string }) {
  return fakeClient(async () => ({ StatusCode: 200, EventStream: eventStream(chunks, complete) }));
}

function ndjson(events: SandboxEvent[]): Uint8Array {
  return encoder.encode(events.map((event) => `${JSON.stringify(event)}\n`).join(''));
}

/** Cuts bytes into pieces of the given sizes, cycling: boundaries land inside lines and characters. */
function cut(bytes: Uint8Array, sizes: number[]): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    pieces.push(bytes.slice(at, at + size));
    at += size;
  }
  return pieces;
}

async function runThrough(client: LambdaClient, req: RunRequest, signal = new AbortController().signal) {
  const rec = recorder();
  const outcome = await createLambdaSandboxRunner(lambdaInvoke(client, FUNCTIONS)).run(req, rec.hooks, signal);
  return { outcome, logs: rec.logs, chunks: rec.chunks };
}

const tsRequest = request('nativets', 'export function main() { return 1; }');
const pyRequest = request('python3', 'def main():\n    return 1\n');

const LOG: SandboxEvent = { type: 'log', text: 'héllo ✓ wörld 🎉\nsecond line\n' };
const OUTCOME: RunOutcome = { ok: true, result: 'chunk "one"\n{"i":2}', streamed: true };
const EVENTS: SandboxEvent[] = [
  LOG,
  { type: 'stream', chunk: 'chunk "one"\n' },
  { type: 'log', text: '' },
  { type: 'stream', chunk: '{"i":2}' },
  { type: 'outcome', outcome: OUTCOME },
];

describe('lambdaInvoke: the Node sandbox (InvokeWithResponseStream)', () => {
  it('invokes the Node function with the request as payload', async () => {
    const { client, sent } = streamingClient([ndjson(EVENTS)]);
    await runThrough(client, tsRequest);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toBeInstanceOf(InvokeWithResponseStreamCommand);
    expect(sent[0]!.input.FunctionName).toBe(FUNCTIONS.node);
    expect(JSON.parse(new TextDecoder().decode(sent[0]!.input.Payload as Uint8Array))).toEqual(tsRequest);
  });

  it('names the workspace as Lambda tenant only when asked to', async () => {
    const { client, sent } = streamingClient([ndjson(EVENTS)]);
    await createLambdaSandboxRunner(lambdaInvoke(client, FUNCTIONS, { tenantPerWorkspace: true })).run(tsRequest, recorder().hooks, new AbortController().signal);
    await runThrough(client, tsRequest);
    expect(sent.map((command) => command.input.TenantId)).toEqual([tsRequest.workspaceId, undefined]);
  });

  it('names one tenant per workspace and run-as user, so two users never share an execution environment', async () => {
    const { client, sent } = streamingClient([ndjson(EVENTS)]);
    const runner = createLambdaSandboxRunner(lambdaInvoke(client, FUNCTIONS, { tenantPerWorkspace: true }));
    const as = (user: string) => ({ ...tsRequest, env: { ...tsRequest.env, OV_USERNAME: user } });
    for (const user of ['alice', 'bob', 'a b/../c']) await runner.run(as(user), recorder().hooks, new AbortController().signal);
    const [alice, bob, odd] = sent.map((command) => command.input.TenantId);
    expect(alice).toBe(`${tsRequest.workspaceId}/alice`);
    expect(bob).toBe(`${tsRequest.workspaceId}/bob`);
    // Outside Lambda's tenant id alphabet: hashed, never trimmed into someone else's tenant.
    expect(odd).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it.each([
    ['one chunk holding every event', [1_000_000]],
    ['one byte at a time', [1]],
    ['uneven pieces splitting lines and multi-byte characters', [3, 7, 2, 11, 5]],
  ])('relays events in order from %s', async (_how, sizes) => {
    const { client } = streamingClient(cut(ndjson(EVENTS), sizes));
    const { outcome, logs, chunks } = await runThrough(client, tsRequest);
    expect(logs).toEqual(['héllo ✓ wörld 🎉\nsecond line\n', '']);
    expect(chunks).toEqual(['chunk "one"\n', '{"i":2}']);
    expect(outcome).toEqual(OUTCOME);
  });

  it('reads a last line that has no newline', async () => {
    const bytes = encoder.encode(`${JSON.stringify(LOG)}\n${JSON.stringify({ type: 'outcome', outcome: OUTCOME })}`);
    const { client } = streamingClient(cut(bytes, [4]));
    expect((await runThrough(client, tsRequest)).outcome).toMatchObject({ ok: true, streamed: true });
  });

  it("carries the real handler's NDJSON through any chunking", async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'svc-sandbox-test-'));
    setSandboxWorkDir(workDir);
    try {
      const content = 'export async function* main(name: string) { console.log(`héllo ${name} 🎉`); yield "ä"; yield { n: name }; }';
      const req = request('nativets', content, { schema: { type: 'object', properties: { name: {} }, required: [] }, args: { name: 'ada' } });
      const written: Buffer[] = [];
      const responseStream = new Writable({
        write(chunk: Buffer, _encoding, done) {
          written.push(chunk);
          done();
        },
      });
      await handler(req, responseStream as never, { getRemainingTimeInMillis: () => 60_000 } as Context);
      const { client } = streamingClient(cut(Buffer.concat(written), [5, 1, 9]));
      const { outcome, logs, chunks } = await runThrough(client, req);
      expect(logs.join('')).toBe('héllo ada 🎉\n');
      expect(chunks).toEqual(['ä', '{"n":"ada"}']);
      expect(outcome).toEqual({ ok: true, result: 'ä{"n":"ada"}', streamed: true });
    } finally {
      await closeSandbox();
      rmSync(workDir, { recursive: true, force: true });
    }
  });

  it("turns the function's error (InvokeComplete.ErrorCode) into a SandboxError with its message", async () => {
    const details = JSON.stringify({ errorType: 'Runtime.ExitError', errorMessage: 'RequestId: 1 Error: Runtime exited with error: signal: killed' });
    const { client } = streamingClient([ndjson([LOG])], { ErrorCode: 'Unhandled', ErrorDetails: details });
    const { outcome, logs } = await runThrough(client, tsRequest);
    expect(logs).toEqual(['héllo ✓ wörld 🎉\nsecond line\n']);
    expect(outcome).toEqual({
      ok: false,
      error: { name: 'SandboxError', message: 'the sandbox function failed (Unhandled): Runtime.ExitError: RequestId: 1 Error: Runtime exited with error: signal: killed' },
    });
  });

  it('reports a stream that ends without an outcome', async () => {
    const { client } = streamingClient([ndjson([LOG])]);
    expect((await runThrough(client, tsRequest)).outcome).toEqual({
      ok: false,
      error: { name: 'SandboxError', message: 'the sandbox ended without reporting an outcome' },
    });
  });

  it('reports a line that is not a sandbox event', async () => {
    const { client } = streamingClient([encoder.encode('{"type":"log","text":1}\n')]);
    expect((await runThrough(client, tsRequest)).outcome).toMatchObject({
      ok: false,
      error: { name: 'SandboxError', message: expect.stringContaining('invalid event') },
    });
  });

  it('reports an invocation that fails', async () => {
    const { client } = fakeClient(async () => {
      throw new Error('Rate exceeded');
    });
    expect((await runThrough(client, tsRequest)).outcome).toEqual({
      ok: false,
      error: { name: 'SandboxError', message: 'the sandbox invocation failed: Rate exceeded' },
    });
  });

  it('stops at once on cancel, even while the stream is silent', async () => {
    async function* silentAfterOneLog(): AsyncGenerator<InvokeWithResponseStreamResponseEvent> {
      yield { PayloadChunk: { Payload: ndjson([LOG]) } };
      await new Promise(() => {});
    }
    const { client } = fakeClient(async () => ({ EventStream: silentAfterOneLog() }));
    const abort = new AbortController();
    const rec = recorder();
    const running = createLambdaSandboxRunner(lambdaInvoke(client, FUNCTIONS)).run(tsRequest, rec.hooks, abort.signal);
    await expect.poll(() => rec.logs.length).toBe(1);
    abort.abort();
    expect(await running).toEqual({ ok: false, error: { name: 'Canceled', message: 'job was canceled' } });
  });
});

describe('lambdaInvoke: the Python sandbox (Invoke)', () => {
  const payloadOf = (value: unknown) => encoder.encode(JSON.stringify(value));

  it('invokes the Python function and relays the events of its one answer', async () => {
    const { client, sent } = fakeClient(async () => ({ StatusCode: 200, Payload: payloadOf({ events: EVENTS }) }));
    const { outcome, logs, chunks } = await runThrough(client, pyRequest);
    expect(sent[0]).toBeInstanceOf(InvokeCommand);
    expect(sent[0]!.input.FunctionName).toBe(FUNCTIONS.python);
    expect(JSON.parse(new TextDecoder().decode(sent[0]!.input.Payload as Uint8Array))).toEqual(pyRequest);
    expect(logs).toHaveLength(2);
    expect(chunks).toEqual(['chunk "one"\n', '{"i":2}']);
    expect(outcome).toMatchObject({ ok: true, streamed: true });
  });

  it("turns a FunctionError into a SandboxError with the function's error message", async () => {
    const error = { errorMessage: '2024-01-01 Task timed out after 900.00 seconds', errorType: 'Sandbox.Timedout' };
    const { client } = fakeClient(async () => ({ StatusCode: 200, FunctionError: 'Unhandled', Payload: payloadOf(error) }));
    expect((await runThrough(client, pyRequest)).outcome).toEqual({
      ok: false,
      error: { name: 'SandboxError', message: 'the sandbox function failed (Unhandled): Sandbox.Timedout: 2024-01-01 Task timed out after 900.00 seconds' },
    });
  });

  it('reports an answer that is not {"events": [...]}', async () => {
    const { client } = fakeClient(async () => ({ StatusCode: 200, Payload: payloadOf({ result: 1 }) }));
    expect((await runThrough(client, pyRequest)).outcome).toMatchObject({ ok: false, error: { name: 'SandboxError' } });
  });
});

afterAll(closeSandbox);
