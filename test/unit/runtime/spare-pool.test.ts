import { describe, expect, it, vi } from 'vitest';
import { SparePool } from '../../../functions/runtime/spare-pool.js';
import type { PooledProcess } from '../../../functions/runtime/warm-pool.js';

/** A process stand-in: it can die on its own, and says whether it was disposed (its jail given back). */
class FakeWorker implements PooledProcess {
  alive = true;
  disposed = 0;
  private exitListeners: (() => void)[] = [];
  onExit(listener: () => void): void {
    this.exitListeners.push(listener);
  }
  setIdle(): void {}
  async dispose(): Promise<void> {
    this.disposed++;
    this.die();
  }
  die(): void {
    if (!this.alive) return;
    this.alive = false;
    for (const listener of this.exitListeners) listener();
  }
}

describe('spare pool', () => {
  it('gives back the jail of a spare that dies while it waits, at once rather than after idleMs', async () => {
    const started: FakeWorker[] = [];
    const start = async () => {
      const worker = new FakeWorker();
      started.push(worker);
      return worker;
    };
    const pool = new SparePool<FakeWorker>({ perKey: 1, maxTotal: 2, idleMs: 3_600_000 });
    const first = await pool.take('k', start);
    await vi.waitFor(() => expect(pool.workers()).toHaveLength(1));
    const spare = pool.workers()[0]!;

    spare.die(); // killed by the OOM killer, say, while idle
    await vi.waitFor(() => expect(spare.disposed).toBe(1));
    expect(pool.workers()).toHaveLength(0);

    // The next take starts a process of its own and tops the spares up again.
    const next = await pool.take('k', start);
    expect(next).not.toBe(spare);
    await vi.waitFor(() => expect(pool.workers()).toHaveLength(1));
    await pool.close();
    // Every spare the pool kept is gone; the two taken by jobs are their jobs' to dispose of.
    expect(started.filter((w) => w !== first && w !== next).map((w) => w.disposed)).toEqual([1, 1]);
  });

  it("starts a taken spare's replacement only once the job that took it has ended", async () => {
    let starts = 0;
    const start = async () => {
      starts++;
      return new FakeWorker();
    };
    const pool = new SparePool<FakeWorker>({ perKey: 1, maxTotal: 2, idleMs: 3_600_000 });
    await pool.take('k', start);
    await vi.waitFor(() => expect(pool.workers()).toHaveLength(1));
    expect(starts).toBe(2);

    let endJob = () => {};
    await pool.take('k', start, new Promise<void>((resolve) => (endJob = resolve)));
    // The job holds the spare that was ready; nothing starts while it runs.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(starts).toBe(2);
    expect(pool.workers()).toHaveLength(0);

    endJob();
    await vi.waitFor(() => expect(pool.workers()).toHaveLength(1));
    expect(starts).toBe(3);
    await pool.close();
  });
});
