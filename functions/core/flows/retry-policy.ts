import type { RetrySettings } from './definition.js';

/**
 * How long a failed step waits before its next attempt (the modelled service's rules): the
 * constant retries come first, then the exponential ones, whose n-th retry (n counting the
 * constant retries too) waits `multiplier × seconds^n`, plus up to `random_factor` percent so that
 * many flows failing together do not all come back at once. Null: no attempt is left.
 *
 * `failed`: how many attempts have failed so far, the one just ended included (1 after the first).
 */
export function retryDelaySeconds(retry: RetrySettings | undefined, failed: number, random: () => number = Math.random): number | null {
  if (!retry || failed < 1) return null;
  const constant = retry.constant?.attempts ?? 0;
  if (failed <= constant) return retry.constant!.seconds;
  const exponential = retry.exponential;
  if (!exponential || failed > constant + exponential.attempts) return null;
  const base = exponential.multiplier * exponential.seconds ** failed;
  const jitter = ((exponential.random_factor ?? 0) / 100) * random();
  return Math.min(MAX_RETRY_DELAY_SECONDS, base * (1 + jitter));
}

/** However the numbers multiply, a retry waits a day at most. */
export const MAX_RETRY_DELAY_SECONDS = 86_400;

/** The most attempts a step may make: its first run and every retry. */
export function maxAttempts(retry: RetrySettings | undefined): number {
  return 1 + (retry?.constant?.attempts ?? 0) + (retry?.exponential?.attempts ?? 0);
}
