import type { Context } from 'aws-lambda';
import { Hono } from 'hono';
import { streamHandle } from 'hono/aws-lambda';
import type { Writable } from 'node:stream';
import { bootstrapInstance } from '../core/identity/bootstrap.js';
import { createApp } from '../http/app.js';
import { errorResponse } from '../http/errors.js';
import { VERSION } from '../version.js';
import { requireAdminToken } from '../adapters/aws/aws-config.js';
import { ApiJobRunner } from '../adapters/aws/api-job-runner.js';
import type { SandboxInvoke } from '../adapters/aws/sandbox-protocol.js';
import { awsShell, lambdaSandboxes, once, type AwsShell } from '../shells/aws.js';

type StreamingHandler = (event: unknown, responseStream: Writable, context: Context) => Promise<void>;

/**
 * The api Lambda: API Gateway (REST, response streaming) -> the same Hono app the local server
 * runs. Streaming lets SSE events out as they happen and sync waits run past API Gateway's 29 s.
 * A script job whose caller waits (sync webhook, SSE stream) runs here, through the sandbox
 * functions (adapters/aws/api-job-runner.ts); every other job goes to SQS and the worker Lambda.
 */
export function createApiHandler(sandboxInvoker: (shell: AwsShell) => SandboxInvoke) {
  const jobs = new ApiJobRunner();
  const app = once(async () => {
    const shell = await awsShell();
    const { config, secrets } = shell;
    const deps = { ...shell.deps, queue: jobs };
    jobs.start({ ...deps, runner: shell.sandboxRunner(sandboxInvoker(shell)) });
    // Idempotent: the first environment creates the admin and workspace, later ones re-register the token.
    await bootstrapInstance(deps.store, deps.clock, { adminToken: requireAdminToken(secrets), defaultWorkspaceId: config.defaultWorkspace, signingKey: deps.config.signingKey });
    return createApp(deps, { maxBodyBytes: config.maxBodyBytes, version: VERSION, sseKeepAliveMs: config.sseKeepAliveMs, sseMaxMs: config.sseMaxMs, goTarget: deps.compiler?.prebuiltTarget });
  });

  // streamHandle wants an app when the module loads; the real one needs secrets and the table first.
  const entry = new Hono();
  entry.onError((err, c) => errorResponse(c, err));
  entry.all('*', async (c) => (await app()).fetch(c.req.raw, c.env));
  const respond = streamHandle(entry) as unknown as StreamingHandler;

  // The response ends when the caller has its answer; the invocation ends once the jobs it runs
  // have finished and been stored.
  const invocation: StreamingHandler = (event, responseStream, context) =>
    jobs.within(() => context.getRemainingTimeInMillis(), () => respond(event, sendsMetadataWhenEmpty(responseStream), context));
  return awslambda.streamifyResponse(invocation);
}

/**
 * The runtime sends an answer's status and headers (the metadata HttpResponseStream.from gives it)
 * just before the stream's first write. streamHandle pipes the body, and an empty one (`c.text('',
 * 401)`) pipes no chunk at all: nothing is written, API Gateway gets no metadata and answers 502.
 * An empty write before the end sends them, as streamHandle itself does for a null body.
 */
export function sendsMetadataWhenEmpty(stream: Writable): Writable {
  let written = false;
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  const end = stream.end.bind(stream) as (...args: unknown[]) => Writable;
  stream.write = ((...args: unknown[]) => {
    written = true;
    return write(...args);
  }) as Writable['write'];
  stream.end = ((...args: unknown[]) => {
    if (!written) {
      written = true;
      write('');
    }
    return end(...args);
  }) as Writable['end'];
  return stream;
}

export const handler = createApiHandler(lambdaSandboxes);
