import type { RunOutcome, RunRequest } from '../../ports.js';

/**
 * How the worker Lambda and a sandbox Lambda talk. The worker sends a `RunRequest` as the
 * invocation payload; the sandbox answers with a response stream of newline-delimited JSON
 * `SandboxEvent`s (InvokeWithResponseStream), so stream chunks reach the job while it runs. The
 * last event is always `outcome`.
 */
export type SandboxEvent =
  | { type: 'log'; text: string }
  | { type: 'stream'; chunk: string }
  | { type: 'outcome'; outcome: RunOutcome }
  // The rest of the answer, outcome included, is the object at the request's `resultUrl`
  // (`{"events": [...]}`): it was too large for Lambda's response (sandbox-payload-offload.ts).
  | { type: 'stored' };

/** Lambda refuses a synchronous invoke's payload and a buffered answer above 6 MB (6,291,456 bytes). */
export const LAMBDA_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** Above this a request or an answer goes through the bucket: room left for what Lambda wraps around it. */
export const INLINE_PAYLOAD_BYTES = 6_000_000;

/**
 * Invokes the sandbox function that runs `language` and yields its events in order. The real one
 * calls Lambda; the tests' one calls the sandbox handler in-process.
 */
export type SandboxInvoke = (request: RunRequest, signal: AbortSignal) => AsyncIterable<SandboxEvent>;

/** Which sandbox function runs a language: Python needs the Python runtime. */
export function sandboxFor(language: RunRequest['language']): 'node' | 'python' {
  return language === 'python3' ? 'python' : 'node';
}
