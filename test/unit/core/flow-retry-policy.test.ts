import { describe, expect, it } from 'vitest';
import { maxAttempts, retryDelaySeconds } from '../../../functions/core/flows/retry-policy.js';

/** The delays between a failed step's attempts (the modelled service's `retry` rules). */
describe('retry delays', () => {
  it('tries the constant retries first, then the exponential ones counting every retry before them', () => {
    const retry = { constant: { attempts: 2, seconds: 5 }, exponential: { attempts: 2, multiplier: 3, seconds: 2 } };
    expect([1, 2, 3, 4, 5].map((failed) => retryDelaySeconds(retry, failed, () => 0))).toEqual([5, 5, 3 * 2 ** 3, 3 * 2 ** 4, null]);
    expect(maxAttempts(retry)).toBe(5);
  });

  it('adds up to random_factor percent, never less than the base delay', () => {
    const retry = { exponential: { attempts: 3, multiplier: 1, seconds: 2, random_factor: 50 } };
    expect(retryDelaySeconds(retry, 1, () => 0)).toBe(2);
    expect(retryDelaySeconds(retry, 1, () => 1)).toBe(3);
    expect(retryDelaySeconds(retry, 2, () => 0.5)).toBe(5);
  });

  it('has no retry without settings or once the attempts are spent, and waits a day at most', () => {
    expect(retryDelaySeconds(undefined, 1)).toBeNull();
    expect(retryDelaySeconds({ constant: { attempts: 1, seconds: 0 } }, 1)).toBe(0);
    expect(retryDelaySeconds({ constant: { attempts: 1, seconds: 0 } }, 2)).toBeNull();
    expect(retryDelaySeconds({ exponential: { attempts: 100, multiplier: 10, seconds: 60 } }, 50, () => 0)).toBe(86_400);
    expect(maxAttempts(undefined)).toBe(1);
  });
});
