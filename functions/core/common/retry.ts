/**
 * The one retry loop of the service: exponential backoff with full jitter.
 *
 * An attempt either returns its result, returns `AGAIN` (a lost optimistic race, unprocessed
 * batch entries: nothing failed, it just has to be tried again), or throws. A thrown error is
 * retried only when `retryOn` says so; anything else stops the loop at once. Each wait before a
 * further attempt is a random time between 0 and `min(maxDelayMs, baseDelayMs * 2^n)`, so
 * competing writers spread out instead of colliding again in lockstep.
 *
 * Written here rather than with p-retry: most callers signal "again" by a result, not an error,
 * and the core must stay free of anything beyond plain timers.
 */

export const AGAIN: unique symbol = Symbol('retry again');
export type Again = typeof AGAIN;

export interface RetryPolicy {
  /** Attempts in all, the first included; `Infinity` retries until an attempt settles. */
  attempts: number;
  /** The cap of the first wait; each further wait's cap doubles. */
  baseDelayMs: number;
  /** No single wait is longer than this. */
  maxDelayMs: number;
}

export interface RetryOptions extends RetryPolicy {
  /** Thrown errors worth another attempt; by default none (errors stop the loop). */
  retryOn?: (error: unknown) => boolean;
  /** The error thrown when every attempt said `AGAIN` (or the last retryable error is rethrown). */
  exhausted: () => Error;
  /** Stops waiting and throws the signal's reason. */
  signal?: AbortSignal;
  /** For tests: the waiting and the randomness. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** For lost optimistic-concurrency races on stored documents: short waits, many tries. */
export const RACE: Omit<RetryPolicy, 'attempts'> = { baseDelayMs: 2, maxDelayMs: 100 };
/** For throttled DynamoDB batches (unprocessed entries): longer waits. */
export const THROTTLE: Omit<RetryPolicy, 'attempts'> = { baseDelayMs: 25, maxDelayMs: 1000 };

/** The cap of the wait before attempt `attempt + 1` (attempt counts from 0). */
export function delayCap(policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
}

export async function retry<T>(options: RetryOptions, attempt: (n: number) => Promise<T | Again>): Promise<T> {
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  let lastError: unknown;
  let failed = false;
  for (let n = 0; n < options.attempts; n++) {
    if (n > 0) {
      options.signal?.throwIfAborted();
      await sleep(random() * delayCap(options, n - 1));
    }
    options.signal?.throwIfAborted();
    try {
      const result = await attempt(n);
      if (result !== AGAIN) return result as T;
      failed = false;
    } catch (e) {
      if (!options.retryOn?.(e)) throw e;
      lastError = e;
      failed = true;
    }
  }
  if (failed) throw lastError;
  throw options.exhausted();
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
