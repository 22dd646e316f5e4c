import {
  InvokeCommand,
  InvokeWithResponseStreamCommand,
  type InvokeCommandInput,
  type InvokeWithResponseStreamCommandInput,
  type InvokeWithResponseStreamResponseEvent,
  type LambdaClient,
} from '@aws-sdk/client-lambda';
import { createHash } from 'node:crypto';
import type { CodeRunner, RunOutcome, RunRequest } from '../../ports.js';
import { canceledError } from '../../runtime/job-guard.js';
import { sandboxFor, type SandboxEvent, type SandboxInvoke } from './sandbox-protocol.js';
import { decodeEventStream, functionErrorMessage, parseBufferedEvents, sandboxFailure } from './sandbox-wire.js';

/**
 * Runs user code by asking a sandbox (on AWS: a Lambda function whose role has no permissions)
 * and relaying what it reports. Nothing runs here, so there is nothing to close.
 */
export function createLambdaSandboxRunner(invoke: SandboxInvoke): CodeRunner {
  return {
    async run(req, hooks, signal) {
      if (signal.aborted) return { ok: false, error: canceledError() };
      // An invocation cannot be called back, so cancel stops listening at once rather than
      // waiting for an invoker that may not watch the signal; the sandbox ends at its timeout.
      let onAbort!: () => void;
      const aborted = new Promise<'aborted'>((resolve) => (onAbort = () => resolve('aborted')));
      signal.addEventListener('abort', onAbort, { once: true });
      let events: AsyncIterator<SandboxEvent> | undefined;
      try {
        events = invoke(req, signal)[Symbol.asyncIterator]();
        for (;;) {
          const next = events.next();
          next.catch(() => undefined); // it may reject after we stopped listening
          const step = await Promise.race([next, aborted]);
          if (step === 'aborted') return { ok: false, error: canceledError() };
          if (step.done) return sandboxFailure('the sandbox ended without reporting an outcome');
          const event = step.value;
          if (event.type === 'outcome') return event.outcome;
          // Read back by withPayloadOffload (sandbox-payload-offload.ts) before it gets here.
          if (event.type === 'stored') return sandboxFailure('the sandbox stored its answer in the bucket, and nothing read it back');
          if (event.type === 'log') hooks.onLog(event.text);
          else hooks.onStream(event.chunk);
        }
      } catch (error) {
        if (signal.aborted) return { ok: false, error: canceledError() };
        return sandboxFailure(`the sandbox invocation failed: ${messageOf(error)}`);
      } finally {
        signal.removeEventListener('abort', onAbort);
        // Lets the invoker release what it holds (a response stream, a child process).
        void events?.return?.().catch(() => undefined);
      }
    },
    async close() {},
  };
}

/** The Lambda functions running sandboxed code: one for Node languages and bash, one for Python. */
export interface SandboxFunctions {
  node: string;
  python: string;
}

export interface LambdaInvokeOptions {
  /**
   * Invoke with the job's workspace and run-as user as Lambda tenant (`sandboxTenantId`). For
   * functions created with per-tenant isolation (`TenancyConfig.PER_TENANT`, as lib/ deploys them),
   * so a container, its /tmp and its warm processes only ever serve one workspace and user: every
   * job in a container runs as the same OS user and could otherwise look at another's warm process.
   * Lambda rejects a tenant id for functions without isolation, and requires one for those with it.
   */
  tenantPerWorkspace?: boolean;
}

/** Lambda's tenant id alphabet; anything else (or too long) is hashed, so two tenants never merge. */
const TENANT_ID = /^[A-Za-z0-9._:/=+\-@]{1,256}$/;

/** The Lambda tenant of a job: its workspace and the user it runs as (`OV_USERNAME`). */
export function sandboxTenantId(request: RunRequest): string {
  const user = request.env.OV_USERNAME;
  const id = user === undefined ? request.workspaceId : `${request.workspaceId}/${user}`;
  return TENANT_ID.test(id) && !id.startsWith('sha256:') ? id : `sha256:${createHash('sha256').update(JSON.stringify([request.workspaceId, user])).digest('hex')}`;
}

/** Invokes the real sandbox functions. */
export function lambdaInvoke(client: LambdaClient, functions: SandboxFunctions, options: LambdaInvokeOptions = {}): SandboxInvoke {
  return (request, signal) => {
    const target = {
      Payload: new TextEncoder().encode(JSON.stringify(request)),
      ...(options.tenantPerWorkspace ? { TenantId: sandboxTenantId(request) } : {}),
    };
    return sandboxFor(request.language) === 'python'
      ? invokeBuffered(client, { ...target, FunctionName: functions.python }, signal)
      : invokeStreaming(client, { ...target, FunctionName: functions.node }, signal);
  };
}

/** The Node sandbox streams NDJSON events, so logs and stream chunks reach the job as they happen. */
async function* invokeStreaming(client: LambdaClient, input: InvokeWithResponseStreamCommandInput, signal: AbortSignal): AsyncGenerator<SandboxEvent> {
  const response = await client.send(new InvokeWithResponseStreamCommand(input), { abortSignal: signal });
  if (!response.EventStream) return;
  yield* responseStreamEvents(response.EventStream);
}

/** Turns Lambda's response event stream into sandbox events; a function error becomes the outcome. */
async function* responseStreamEvents(
  stream: AsyncIterable<InvokeWithResponseStreamResponseEvent>,
): AsyncGenerator<SandboxEvent> {
  let failure: RunOutcome | undefined;
  async function* payloads(): AsyncGenerator<Uint8Array> {
    for await (const event of stream) {
      if (event.PayloadChunk?.Payload) yield event.PayloadChunk.Payload;
      const complete = event.InvokeComplete;
      if (complete?.ErrorCode) failure = sandboxFailure(functionErrorMessage(complete.ErrorCode, complete.ErrorDetails ?? ''));
    }
  }
  yield* decodeEventStream(payloads());
  if (failure) yield { type: 'outcome', outcome: failure };
}

/** Lambda's Python runtime cannot stream, so the Python sandbox answers once with every event. */
async function* invokeBuffered(client: LambdaClient, input: InvokeCommandInput, signal: AbortSignal): AsyncGenerator<SandboxEvent> {
  const response = await client.send(new InvokeCommand(input), { abortSignal: signal });
  const payload = new TextDecoder().decode(response.Payload ?? new Uint8Array());
  if (response.FunctionError) {
    yield { type: 'outcome', outcome: sandboxFailure(functionErrorMessage(response.FunctionError, payload)) };
    return;
  }
  yield* parseBufferedEvents(payload);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
