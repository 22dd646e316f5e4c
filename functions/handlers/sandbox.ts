/**
 * The Node sandbox Lambda: runs TypeScript (bun, deno, nativets) and bash jobs for the worker. Its
 * role has no permissions, so user code here holds no service credentials. Python jobs go to the
 * Python sandbox (./sandbox-python/handler.py).
 */
import type { Context, StreamifyHandler } from 'aws-lambda';
import { runSandboxed, sweepBetweenJobs } from '../adapters/aws/node-sandbox.js';
import { encodeEventLine } from '../adapters/aws/sandbox-wire.js';

// Tests and the CDK bundle check drive the handler module's own sandbox through these.
export { closeSandbox, runSandboxed, setSandboxWorkDir } from '../adapters/aws/node-sandbox.js';

/** Kept back from the function's own deadline, so a job that runs long still gets its outcome out. */
const DEADLINE_MARGIN_MS = 2_000;

/** Writes the events of one run as NDJSON on Lambda's response stream. */
const streamSandboxRun: StreamifyHandler<unknown, void> = async (event, responseStream, context: Context) => {
  responseStream.setContentType?.('application/x-ndjson');
  const abort = new AbortController();
  // The stream closing before we end it means the worker hung up: nobody waits for this job.
  const hangUp = () => abort.abort();
  responseStream.once('close', hangUp);
  responseStream.once('error', hangUp);
  try {
    await runSandboxed(
      event,
      (sandboxEvent) => void responseStream.write(encodeEventLine(sandboxEvent)),
      abort.signal,
      context.getRemainingTimeInMillis() - DEADLINE_MARGIN_MS,
    );
  } finally {
    responseStream.off('close', hangUp);
    await new Promise<void>((resolve) => responseStream.end(resolve));
    // On Lambda only: elsewhere this process's uid runs more than the sandbox.
    if (process.env.AWS_LAMBDA_FUNCTION_NAME) sweepBetweenJobs();
  }
};

/**
 * `awslambda` is a global of the Lambda Node runtime (typed by @types/aws-lambda). Elsewhere the
 * handler is the plain streaming function, so this module can be imported by tests and bridges.
 * The check is for the function, not the global: the AWS SDK creates an empty `awslambda` object.
 */
const lambdaRuntime = (globalThis as { awslambda?: Partial<typeof awslambda> }).awslambda;

export const handler: StreamifyHandler<unknown, void> =
  typeof lambdaRuntime?.streamifyResponse === 'function' ? lambdaRuntime.streamifyResponse(streamSandboxRun) : streamSandboxRun;
