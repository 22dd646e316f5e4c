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
  | { type: 'outcome'; outcome: RunOutcome };

/**
 * Invokes the sandbox function that runs `language` and yields its events in order. The real one
 * calls Lambda; the tests' one calls the sandbox handler in-process.
 */
export type SandboxInvoke = (request: RunRequest, signal: AbortSignal) => AsyncIterable<SandboxEvent>;

/** Which sandbox function runs a language: Python needs the Python runtime. */
export function sandboxFor(language: RunRequest['language']): 'node' | 'python' {
  return language === 'python3' ? 'python' : 'node';
}
