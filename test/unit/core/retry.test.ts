import { describe, expect, it } from 'vitest';
import { AGAIN, delayCap, retry, type RetryOptions } from '../../../functions/core/common/retry.js';

/** Records the waits instead of sleeping, so nothing here depends on time. */
function recorder(random = () => 1) {
  const waits: number[] = [];
  const options = { baseDelayMs: 10, maxDelayMs: 100, random, sleep: async (ms: number) => void waits.push(ms), exhausted: () => new Error('gave up') };
  return { waits, options };
}

describe('retry', () => {
  it('returns the first settled result without waiting', async () => {
    const { waits, options } = recorder();
    let calls = 0;
    expect(await retry({ ...options, attempts: 5 }, async () => ++calls)).toBe(1);
    expect(calls).toBe(1);
    expect(waits).toEqual([]);
  });

  it('tries exactly `attempts` times on AGAIN, then throws the exhausted error', async () => {
    const { waits, options } = recorder();
    let calls = 0;
    await expect(retry({ ...options, attempts: 5 }, async () => (calls++, AGAIN))).rejects.toThrow('gave up');
    expect(calls).toBe(5);
    expect(waits).toHaveLength(4);
  });

  it('settles on a later attempt and passes the attempt number', async () => {
    const { options } = recorder();
    const seen: number[] = [];
    expect(await retry({ ...options, attempts: 20 }, async (n) => (seen.push(n), n < 3 ? AGAIN : 'done'))).toBe('done');
    expect(seen).toEqual([0, 1, 2, 3]);
  });

  it('doubles the wait cap from the base and never exceeds the maximum', async () => {
    const { waits, options } = recorder(() => 1);
    await expect(retry({ ...options, attempts: 7 }, async () => AGAIN)).rejects.toThrow();
    expect(waits).toEqual([10, 20, 40, 80, 100, 100]);
    for (let n = 0; n < 60; n++) expect(delayCap(options, n)).toBeLessThanOrEqual(100);
  });

  it('jitters each wait between zero and its cap', async () => {
    const draws = [0, 0.5, 0.25, 0.999];
    const { waits, options } = recorder(() => draws.shift()!);
    await expect(retry({ ...options, attempts: 5 }, async () => AGAIN)).rejects.toThrow();
    expect(waits).toEqual([0, 10, 10, 80 * 0.999]);
  });

  it('waits differ between runs with the real random source', async () => {
    const runs = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const { waits, options } = recorder(Math.random);
        await expect(retry({ ...options, attempts: 4 }, async () => AGAIN)).rejects.toThrow();
        for (const [n, w] of waits.entries()) {
          expect(w).toBeGreaterThanOrEqual(0);
          expect(w).toBeLessThanOrEqual(delayCap(options, n));
        }
        return waits.join(',');
      }),
    );
    expect(new Set(runs).size).toBeGreaterThan(1);
  });

  it('stops at once on an error it was not told to retry', async () => {
    const { waits, options } = recorder();
    let calls = 0;
    await expect(
      retry({ ...options, attempts: 5, retryOn: (e) => (e as Error).message === 'busy' }, async () => {
        calls++;
        throw new Error('broken');
      }),
    ).rejects.toThrow('broken');
    expect(calls).toBe(1);
    expect(waits).toEqual([]);
  });

  it('retries retryable errors and rethrows the last one when attempts run out', async () => {
    const { options } = recorder();
    let calls = 0;
    const opts: RetryOptions = { ...options, attempts: 3, retryOn: (e) => (e as Error).message.startsWith('busy') };
    await expect(retry(opts, async () => { throw new Error(`busy ${++calls}`); })).rejects.toThrow('busy 3');
    expect(calls).toBe(3);
    calls = 0;
    expect(await retry(opts, async () => (++calls < 2 ? Promise.reject(new Error('busy')) : 'ok'))).toBe('ok');
  });

  it('keeps going with unbounded attempts until an attempt settles', async () => {
    const { options } = recorder();
    let calls = 0;
    expect(await retry({ ...options, attempts: Infinity }, async () => (++calls < 30 ? AGAIN : calls))).toBe(30);
  });

  it('stops when its signal is aborted', async () => {
    const controller = new AbortController();
    const { options } = recorder();
    let calls = 0;
    const run = retry({ ...options, attempts: Infinity, signal: controller.signal }, async () => {
      if (++calls === 3) controller.abort(new Error('stopped'));
      return AGAIN;
    });
    await expect(run).rejects.toThrow('stopped');
    expect(calls).toBe(3);
  });
});
