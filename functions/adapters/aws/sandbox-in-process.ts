import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runSandboxed } from './node-sandbox.js';
import type { RunRequest } from '../../ports.js';
import { LAMBDA_PAYLOAD_BYTES, sandboxFor, type SandboxEvent, type SandboxInvoke } from './sandbox-protocol.js';
import { parseBufferedEvents } from './sandbox-wire.js';

/**
 * Invokes the sandbox handlers on this machine instead of on Lambda: for tests and local bridges.
 * Kept apart from lambda-sandbox-runner.ts so the worker's bundle does not pull in the local
 * runner (and the TypeScript compiler) through node-sandbox.ts.
 */

const PYTHON_HANDLER = fileURLToPath(new URL('../../handlers/sandbox-python/handler.py', import.meta.url));

export interface InProcessSandboxOptions {
  /** The interpreter that runs the Python handler (default `python3` on PATH). */
  python?: string;
}

export function inProcessInvoke(options: InProcessSandboxOptions = {}): SandboxInvoke {
  const python = options.python ?? 'python3';
  return (request, signal) => {
    // As Lambda does: a payload past 6 MB is refused before anything runs.
    const bytes = Buffer.byteLength(JSON.stringify(request));
    if (bytes > LAMBDA_PAYLOAD_BYTES) return refused(bytes);
    return sandboxFor(request.language) === 'python' ? runPythonHandler(python, request, signal) : runNodeHandler(request, signal);
  };
}

/** Lambda's answer to an invocation payload past its limit (what the SDK throws). */
// eslint-disable-next-line require-yield -- fails before its first event, as the SDK's send does
async function* refused(bytes: number): AsyncGenerator<SandboxEvent> {
  const error = new Error(`${bytes} byte payload is too large for the RequestResponse invocation type (limit ${LAMBDA_PAYLOAD_BYTES} bytes)`);
  error.name = 'RequestEntityTooLargeException';
  throw error;
}

/** The Node handler's work, with its pushed events turned into an async iterable. */
async function* runNodeHandler(request: RunRequest, signal: AbortSignal): AsyncGenerator<SandboxEvent> {
  const queued: SandboxEvent[] = [];
  let wake: (() => void) | undefined;
  let finished = false;
  const running = runSandboxed(request, (event) => {
    queued.push(event);
    wake?.();
  }, signal).finally(() => {
    finished = true;
    wake?.();
  });
  try {
    for (;;) {
      const event = queued.shift();
      if (event) yield event;
      else if (finished) break;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    wake = undefined;
  }
  await running;
}

/**
 * The real Python handler module, run as `python3 handler.py` (its `__main__` entry): the event
 * on stdin, the handler's `{"events": [...]}` on stdout. The handler process gets this process's
 * environment, as the Lambda's handler gets the Lambda's: keeping it from user code is its job.
 */
async function* runPythonHandler(python: string, request: RunRequest, signal: AbortSignal): AsyncGenerator<SandboxEvent> {
  // -B: no __pycache__ written into the source tree.
  const child = spawn(python, ['-B', PYTHON_HANDLER], { stdio: ['pipe', 'pipe', 'pipe'], signal, killSignal: 'SIGTERM' });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.stdin.on('error', () => undefined); // a handler that died early is reported by its exit
  child.stdin.end(JSON.stringify(request));
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0) {
      throw new Error(`the Python handler exited with code ${code}: ${Buffer.concat(stderr).toString('utf8').trim()}`);
    }
    const answer = Buffer.concat(stdout);
    // Lambda refuses a buffered answer past 6 MB; the handler keeps below it (handler.py).
    if (answer.length > LAMBDA_PAYLOAD_BYTES) throw new Error(`the Python sandbox answered ${answer.length} bytes, past Lambda's ${LAMBDA_PAYLOAD_BYTES}`);
    yield* parseBufferedEvents(answer.toString('utf8'));
  } finally {
    // SIGTERM, not SIGKILL: the handler then kills the job's process group on its way out.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }
}
