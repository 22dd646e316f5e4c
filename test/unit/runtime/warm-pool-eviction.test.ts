import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_LIMITS, type ResourceLimits } from '../../../functions/runtime/job-limits.js';
import { WarmPool, type PoolableWorker } from '../../../functions/runtime/warm-pool.js';

/** Stands in for a process: counts starts, knows when it was disposed. */
class FakeWorker implements PoolableWorker {
  alive = true;
  /** CPU time used, in seconds; `cpuReads` counts how often the pool read it. */
  cpu = 0;
  cpuReads = 0;
  /** Open files, and the limit on them. */
  files = 10;
  filesLimit = 1024;
  /** Bytes its kept files take, and its disk quota. */
  disk = 0;
  diskLimit = 1024 * 1024 * 1024;
  constructor(
    readonly key: string,
    public bytes = 0,
    private readonly limit = 512 * 1024 * 1024,
    private readonly cpuLimit = 900,
  ) {}
  onExit(): void {}
  setIdle(): void {}
  memoryBytes(): number {
    return this.bytes;
  }
  cpuSeconds(): number {
    this.cpuReads++;
    return this.cpu;
  }
  openFiles(): number {
    return this.files;
  }
  diskBytes(): number {
    return this.disk;
  }
  limits(): ResourceLimits {
    return { ...DEFAULT_LIMITS, memoryBytes: this.limit, cpuSeconds: this.cpuLimit, openFiles: this.filesLimit, diskBytes: this.diskLimit };
  }
  async dispose(): Promise<void> {
    this.alive = false;
  }
}

const MB = 1024 * 1024;

/** Runs one job per key in order; `sizeOf` says what each key's process costs. */
async function runThrough(pool: WarmPool<FakeWorker>, keys: string[], starts: string[], sizeOf: (key: string) => number = () => 0): Promise<void> {
  for (const key of keys) {
    const lease = await pool.acquire(key, async () => (starts.push(key), new FakeWorker(key, sizeOf(key))), new AbortController().signal);
    pool.release(lease, true);
  }
}

describe('warm pool eviction', () => {
  it('keeps most processes of a flow with more step versions than fit, run after run', async () => {
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 4, maxTotal: 8, memoryBudgetBytes: Infinity, idleMs: 60_000 });
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
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 4, maxTotal: 8, memoryBudgetBytes: Infinity, idleMs: 60_000 });
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
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 1, maxTotal: 2, memoryBudgetBytes: Infinity, idleMs: 60_000 });
    const starts: string[] = [];
    await runThrough(pool, ['a', 'b', 'a', 'c', 'a'], starts);
    expect(starts).toEqual(['a', 'b', 'c']);
    await pool.close();
  });
});

describe('warm pool memory budget', () => {
  const sizeByName = (key: string) => (key.startsWith('node') ? 50 * MB : 10 * MB);

  it('keeps 40 small step processes warm where a count of 32 would restart some on every run', async () => {
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 4, maxTotal: 128, memoryBudgetBytes: 512 * MB, idleMs: 60_000 });
    const steps = Array.from({ length: 40 }, (_, i) => `py${i}`);
    const starts: string[] = [];
    await runThrough(pool, steps, starts, sizeByName);
    starts.length = 0;
    for (let run = 0; run < 3; run++) await runThrough(pool, steps, starts, sizeByName);
    expect(starts).toEqual([]);
    expect(pool.size).toBe(40);
    expect(pool.memoryBytes).toBe(400 * MB);
    await pool.close();
  });

  it('evicts by memory: large processes are kept in fewer numbers than small ones', async () => {
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 4, maxTotal: 128, memoryBudgetBytes: 220 * MB, idleMs: 60_000 });
    const starts: string[] = [];
    await runThrough(pool, ['node0', 'node1', 'node2', 'node3', 'node4', 'node5'], starts, sizeByName);
    expect(pool.size).toBe(4); // 4 x 50 MB fit in 220 MB, a fifth does not
    expect(pool.memoryBytes).toBeLessThanOrEqual(220 * MB);
    // The least recently used went: node0 and node1 start again, node5 is still there.
    starts.length = 0;
    await runThrough(pool, ['node5', 'node0'], starts, sizeByName);
    expect(starts).toEqual(['node0']);
    await pool.close();
  });

  it('still bounds the number of processes, however small', async () => {
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 4, maxTotal: 5, memoryBudgetBytes: 1024 * MB, idleMs: 60_000 });
    await runThrough(pool, Array.from({ length: 9 }, (_, i) => `py${i}`), [], sizeByName);
    expect(pool.size).toBe(5);
    await pool.close();
  });

  it('does not keep a process larger than the whole budget', async () => {
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 4, maxTotal: 128, memoryBudgetBytes: 40 * MB, idleMs: 60_000 });
    const starts: string[] = [];
    await runThrough(pool, ['py0', 'node0', 'py0', 'node0'], starts, sizeByName);
    expect(starts).toEqual(['py0', 'node0', 'node0']);
    expect(pool.size).toBe(1);
    await pool.close();
  });

  it('keeps most of a cycle warm when the budget holds fewer steps than the flow has', async () => {
    // 10 steps of 10 MB, room for 8: the cycle rule of the count limit holds for memory too.
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 4, maxTotal: 128, memoryBudgetBytes: 80 * MB, idleMs: 60_000 });
    const steps = Array.from({ length: 10 }, (_, i) => `py${i}`);
    const starts: string[] = [];
    await runThrough(pool, steps, starts, sizeByName);
    starts.length = 0;
    for (let run = 0; run < 5; run++) await runThrough(pool, steps, starts, sizeByName);
    expect(starts.length).toBeLessThanOrEqual(5 * 3);
    expect(pool.memoryBytes).toBeLessThanOrEqual(80 * MB);
    await pool.close();
  });

  describe('a process that keeps growing', () => {
    afterEach(() => vi.useRealTimers());

    /** One job on `key` every 2 s (the pool reads a busy process's memory at most once a second); `grow` is what each adds. */
    async function jobs(pool: WarmPool<FakeWorker>, count: number, start: () => FakeWorker, grow: number): Promise<FakeWorker[]> {
      const used: FakeWorker[] = [];
      for (let i = 0; i < count; i++) {
        vi.advanceTimersByTime(2000);
        const lease = await pool.acquire('ts', async () => start(), new AbortController().signal);
        lease.worker.bytes += grow;
        used.push(lease.worker);
        pool.release(lease, true);
      }
      return used;
    }

    it('is replaced once it grew by half the room under its limit, before a run fails on it', async () => {
      vi.useFakeTimers();
      const pool = new WarmPool<FakeWorker>({ maxPerKey: 1, maxTotal: 8, memoryBudgetBytes: 1024 * MB, idleMs: 600_000 });
      // 60 MB after its first job, 100 MB limit: 20 MB of growth is half the room.
      const used = await jobs(pool, 30, () => new FakeWorker('ts', 59 * MB, 100 * MB), 1 * MB);
      const processes = [...new Set(used)];
      expect(processes.length).toBeGreaterThan(1);
      // None ever reached its limit. The first served 22 jobs: at 81 MB it had grown by 21 MB,
      // more than half of the 40 MB it had under its limit after its first job.
      expect(Math.max(...processes.map((p) => p.bytes))).toBeLessThan(100 * MB);
      expect(used.indexOf(processes[1]!)).toBe(22);
      expect(processes[0]!.alive).toBe(false);
      await pool.close();
    });

    it('is kept when it is large from its first job on and stays so', async () => {
      vi.useFakeTimers();
      const pool = new WarmPool<FakeWorker>({ maxPerKey: 1, maxTotal: 8, memoryBudgetBytes: 1024 * MB, idleMs: 600_000 });
      const used = await jobs(pool, 30, () => new FakeWorker('ts', 90 * MB, 100 * MB), 0);
      expect(new Set(used).size).toBe(1);
      await pool.close();
    });

    it('is kept when its measure starts above its limit (an RSS that counts shared pages)', async () => {
      vi.useFakeTimers();
      const pool = new WarmPool<FakeWorker>({ maxPerKey: 1, maxTotal: 8, memoryBudgetBytes: 1024 * MB, idleMs: 600_000 });
      const used = await jobs(pool, 10, () => new FakeWorker('ts', 58 * MB, 40 * MB), 0);
      expect(new Set(used).size).toBe(1);
      await pool.close();
    });
  });
});

describe('a process that used the CPU time of a job', () => {
  afterEach(() => vi.useRealTimers());

  it('is replaced, so every job it serves starts with a whole job of CPU time left under its limit', async () => {
    vi.useFakeTimers();
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 1, maxTotal: 8, memoryBudgetBytes: Infinity, idleMs: 600_000 });
    // A 10 s limit per job (the process's own is 20 s) and jobs of 3 s of CPU each.
    const usedAtStart: number[] = [];
    const processes = new Set<FakeWorker>();
    for (let i = 0; i < 12; i++) {
      const lease = await pool.acquire('ts', async () => new FakeWorker('ts', 0, 512 * MB, 10), new AbortController().signal);
      processes.add(lease.worker);
      usedAtStart.push(lease.worker.cpu);
      vi.advanceTimersByTime(3000);
      lease.worker.cpu += 3;
      pool.release(lease, true);
    }
    expect(Math.max(...usedAtStart)).toBeLessThan(10);
    // Each process served 4 jobs (0, 3, 6 and 9 s used when they started) and went at 12 s.
    expect(processes.size).toBe(3);
    expect([...processes].map((p) => [p.cpu, p.alive])).toEqual([[12, false], [12, false], [12, false]]);
    await pool.close();
  });

  it('is read from /proc only when the limit could have been reached since the last read', async () => {
    vi.useFakeTimers();
    const pool = new WarmPool<FakeWorker>({ maxPerKey: 1, maxTotal: 8, memoryBudgetBytes: Infinity, idleMs: 600_000 });
    let worker: FakeWorker | undefined;
    // 2,000 jobs of a millisecond each against a 900 s limit: nothing to read but the first time.
    for (let i = 0; i < 2000; i++) {
      const lease = await pool.acquire('ts', async () => new FakeWorker('ts'), new AbortController().signal);
      worker = lease.worker;
      vi.advanceTimersByTime(1);
      lease.worker.cpu += 0.001;
      pool.release(lease, true);
    }
    expect(worker!.cpuReads).toBe(1);
    await pool.close();
  });
});

describe('a process given back while a job waits for it', () => {
  it('is judged before it is handed over: one past its CPU time or memory is replaced, not passed on', async () => {
    for (const spend of [(w: FakeWorker) => (w.cpu = 10), (w: FakeWorker) => (w.bytes = 2048 * MB)]) {
      const pool = new WarmPool<FakeWorker>({ maxPerKey: 1, maxTotal: 8, memoryBudgetBytes: 1024 * MB, idleMs: 600_000 });
      const started: FakeWorker[] = [];
      const start = async () => (started.push(new FakeWorker('ts', 0, 512 * MB, 10)), started.at(-1)!);
      const first = await pool.acquire('ts', start, new AbortController().signal);
      const queued = pool.acquire('ts', start, new AbortController().signal);
      spend(first.worker);
      pool.release(first, true);
      const second = await queued;
      expect(second.worker).not.toBe(first.worker);
      expect(first.worker.alive).toBe(false);
      expect(started).toHaveLength(2);
      pool.release(second, true);
      await pool.close();
    }
  });
});

describe('a process whose open files or kept files keep growing', () => {
  const leaks = {
    'a file left open': { start: (w: FakeWorker) => Object.assign(w, { files: 9, filesLimit: 64 }), job: (w: FakeWorker) => w.files++, size: (w: FakeWorker) => w.files, limit: 64 },
    'a file left in /tmp': { start: (w: FakeWorker) => Object.assign(w, { disk: 9 * MB, diskLimit: 64 * MB }), job: (w: FakeWorker) => (w.disk += MB), size: (w: FakeWorker) => w.disk, limit: 64 * MB },
  };
  for (const [name, leak] of Object.entries(leaks)) {
    it(`is replaced once they grew by half the room under its limit, however fast its jobs come: ${name} per job`, async () => {
      const pool = new WarmPool<FakeWorker>({ maxPerKey: 1, maxTotal: 8, memoryBudgetBytes: Infinity, idleMs: 600_000 });
      // Run back to back; 10 after the first job, 64 allowed.
      const used: FakeWorker[] = [];
      for (let i = 0; i < 100; i++) {
        const lease = await pool.acquire('ts', async () => leak.start(new FakeWorker('ts')), new AbortController().signal);
        leak.job(lease.worker);
        used.push(lease.worker);
        pool.release(lease, true);
      }
      const processes = [...new Set(used)];
      expect(Math.max(...processes.map(leak.size))).toBeLessThan(leak.limit);
      // Half of the 54 of room is 27: the process that had 10 after its first job goes after its
      // 29th, with 38; the 30th job is the next process's first.
      expect(used.indexOf(processes[1]!)).toBe(29);
      await pool.close();
    });
  }
});
