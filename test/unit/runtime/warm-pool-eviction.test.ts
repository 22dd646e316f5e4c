import { describe, expect, it } from 'vitest';
import { WarmPool, type PoolableWorker } from '../../../functions/runtime/warm-pool.js';

/** Stands in for a process: counts starts, knows when it was disposed. */
class FakeWorker implements PoolableWorker {
  alive = true;
  constructor(readonly key: string) {}
  onExit(): void {}
  setIdle(): void {}
  async dispose(): Promise<void> {
    this.alive = false;
  }
}

async function runThrough(pool: WarmPool<FakeWorker>, keys: string[], starts: string[]): Promise<void> {
  for (const key of keys) {
    const lease = await pool.acquire(key, async () => (starts.push(key), new FakeWorker(key)), new AbortController().signal);
    pool.release(lease, true);
  }
}

describe('warm pool eviction', () => {
  it('keeps most processes of a flow with more step versions than fit, run after run', async () => {
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 4, maxTotal: 8, idleMs: 60_000 });
    const steps = Array.from({ length: 10 }, (_, i) => `step${i}`);
    const starts: string[] = [];
    await runThrough(pool, steps, starts);
    expect(starts).toHaveLength(10); // the first run starts every step
    starts.length = 0;
    for (let run = 0; run < 5; run++) await runThrough(pool, steps, starts);
    // Plain LRU would start all 10 again on every run (50); at most the 2 that do not fit take turns.
    expect(starts.length).toBeLessThanOrEqual(5 * 3);
    expect(pool.size).toBeLessThanOrEqual(8);
    await pool.close();
  });

  it('gives the processes of a workload that moved on to the new one', async () => {
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 4, maxTotal: 8, idleMs: 60_000 });
    const before = Array.from({ length: 8 }, (_, i) => `old${i}`);
    const after = Array.from({ length: 8 }, (_, i) => `new${i}`);
    const starts: string[] = [];
    for (let run = 0; run < 5; run++) await runThrough(pool, before, starts);
    starts.length = 0;
    await runThrough(pool, after, starts);
    expect(starts).toEqual(after);
    starts.length = 0;
    for (let run = 0; run < 3; run++) await runThrough(pool, after, starts);
    expect(starts).toEqual([]);
    await pool.close();
  });

  it('evicts the least recently used when nothing cycles', async () => {
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 1, maxTotal: 2, idleMs: 60_000 });
    const starts: string[] = [];
    await runThrough(pool, ['a', 'b', 'a', 'c', 'a'], starts);
    expect(starts).toEqual(['a', 'b', 'c']);
    await pool.close();
  });
});
