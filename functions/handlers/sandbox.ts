/**
 * The Node sandbox Lambda: runs TypeScript (bun, deno, nativets) and bash jobs for the worker. Its
 * role has no permissions, so user code here holds no service credentials. Python jobs go to the
 * Python sandbox (./sandbox-python/handler.py).
 */
import type { Context, StreamifyHandler } from 'aws-lambda';
import { sandboxFor, type SandboxEvent } from '../adapters/aws/sandbox-protocol.js';
import { encodeEventLine, parseRunRequest, sandboxFailure } from '../adapters/aws/sandbox-wire.js';
import type { RunOutcome } from '../ports.js';
import { createLocalRunner, type LocalRunner } from '../runtime/index.js';
import { sweepEnvironment } from '../runtime/environment-sweep.js';
import { Confiner } from '../runtime/confinement.js';
import { limitsFromEnv, uidRangeFromEnv } from '../runtime/job-limits.js';

/** /tmp is the only writable place on Lambda. */
const DEFAULT_WORK_DIR = '/tmp/svc-sandbox';
/** Kept back from the function's own deadline, so a job that runs long still gets its outcome out. */
const DEADLINE_MARGIN_MS = 2_000;

let workDir = DEFAULT_WORK_DIR;
/**
 * One runner per container, kept across invocations: its warm processes hold script versions, so
 * the next invocation for the same version skips the start.
 */
let containerRunner: LocalRunner | undefined;

function sandboxRunner(): LocalRunner {
  if (containerRunner) return containerRunner;
  // Same rules as the local shell; where the platform allows less (no root or namespaces on
  // Lambda), the log says so rather than running unconfined silently.
  const confiner = new Confiner({ limits: limitsFromEnv(process.env), uidRange: uidRangeFromEnv(process.env) });
  console.error(JSON.stringify({ level: 'info', msg: 'sandbox runtime', confinement: confiner.describe() }));
  return (containerRunner = createLocalRunner({
    workDir,
    confiner,
    // Lambda sends a container one invocation at a time, so one warm process per version is
    // enough; a few versions stay warm without crowding the function's memory (~50 MB each).
    maxWarmPerKey: 1,
    maxWarmTotal: 8,
  }));
}

/** Moves the sandbox's work directory (tests); takes effect with the next runner. */
export function setSandboxWorkDir(dir: string): void {
  workDir = dir;
}

/** Stops the warm processes of this container (tests, local bridges shutting down). */
export async function closeSandbox(): Promise<void> {
  const runner = containerRunner;
  containerRunner = undefined;
  await runner?.close();
}

/**
 * Runs one job and reports it through `write`: `log` and `stream` events as they happen, then
 * exactly one `outcome`. The payload is typed `unknown` because it comes off the wire: it is
 * checked here, and a bad one is answered with an outcome, never an exception.
 */
export async function runSandboxed(
  payload: unknown,
  write: (event: SandboxEvent) => void,
  signal: AbortSignal,
  /** Time the host gives this run; the job's own timeout is cut to fit inside it. */
  remainingMs = Number.POSITIVE_INFINITY,
): Promise<void> {
  write({ type: 'outcome', outcome: await runChecked(payload, write, signal, remainingMs) });
}

async function runChecked(payload: unknown, write: (event: SandboxEvent) => void, signal: AbortSignal, remainingMs: number): Promise<RunOutcome> {
  const parsed = parseRunRequest(payload);
  if (!parsed.ok) return sandboxFailure(parsed.message);
  const { request } = parsed;
  if (sandboxFor(request.language) !== 'node') {
    return sandboxFailure(`the Node sandbox does not run ${request.language} jobs`);
  }
  // The runner's own timeout yields a proper TimeoutError; Lambda's would cut the stream mid-job.
  const timeoutMs = Math.max(1, Math.min(request.timeoutMs, remainingMs));
  try {
    return await sandboxRunner().run(
      { ...request, timeoutMs },
      { onLog: (text) => write({ type: 'log', text }), onStream: (chunk) => write({ type: 'stream', chunk }) },
      signal,
    );
  } catch (error) {
    return sandboxFailure(`the sandbox failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

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
    if (process.env.AWS_LAMBDA_FUNCTION_NAME && containerRunner) {
      sweepEnvironment({ processGroups: containerRunner.warmProcessGroups(), dirs: [containerRunner.workRoot] });
    }
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
