import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FLUSH_MS, LIVE_REWRITE_BYTES_PER_SECOND, throttledLogWriter } from '../../functions/core/runs/live-logs.js';

describe('throttled live log writer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('batches the text of one flush interval into a single write', async () => {
    const writes: string[] = [];
    const w = throttledLogWriter(async (c) => void writes.push(c), 1000);
    w.add('a\n');
    w.add('b\n');
    expect(writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(FLUSH_MS);
    expect(writes).toEqual(['a\nb\n']);
    w.add('c\n');
    await vi.advanceTimersByTimeAsync(FLUSH_MS);
    expect(writes).toEqual(['a\nb\n', 'c\n']);
    await w.stop();
  });

  it('writes nothing for a job that ends before the first flush', async () => {
    const writes: string[] = [];
    const w = throttledLogWriter(async (c) => void writes.push(c), 1000);
    w.add('quick\n');
    await w.stop();
    await vi.advanceTimersByTimeAsync(FLUSH_MS * 3);
    expect(writes).toEqual([]);
  });

  it('stops at maxOutputBytes', async () => {
    const writes: string[] = [];
    const w = throttledLogWriter(async (c) => void writes.push(c), 5);
    w.add('1234');
    await vi.advanceTimersByTimeAsync(FLUSH_MS);
    w.add('5678');
    await vi.advanceTimersByTimeAsync(FLUSH_MS);
    w.add('9');
    await vi.advanceTimersByTimeAsync(FLUSH_MS);
    expect(writes.join('')).toBe('12345');
    await w.stop();
  });

  it('a failed write does not throw into the job', async () => {
    const w = throttledLogWriter(async () => { throw new Error('store down'); }, 100);
    w.add('x');
    await vi.advanceTimersByTimeAsync(FLUSH_MS);
    await expect(w.stop()).resolves.toBeUndefined();
  });
  it('rewrites the stored text at a bounded rate, however long the job trickles after a large output', async () => {
    // Each store write rewrites everything stored before it (SQLite copies the row).
    let stored = 0;
    let rewritten = 0;
    let writes = 0;
    const w = throttledLogWriter(async (c) => {
      stored += c.length;
      rewritten += stored;
      writes++;
    }, 6 * 1024 * 1024);
    w.add('x'.repeat(5 * 1024 * 1024));
    await vi.advanceTimersByTimeAsync(FLUSH_MS);
    rewritten = 0;
    writes = 0;
    // A dot every 300 ms for a minute.
    for (let i = 0; i < 200; i++) {
      w.add('.');
      await vi.advanceTimersByTimeAsync(300);
    }
    await w.stop();
    expect(rewritten).toBeLessThanOrEqual(LIVE_REWRITE_BYTES_PER_SECOND * 60 * 1.2);
    // Still live: a write every few seconds, holding the dots printed meanwhile.
    expect(writes).toBeGreaterThanOrEqual(10);
    expect(stored).toBeGreaterThan(5 * 1024 * 1024 + 150);
  });
});
