import { availableParallelism } from 'node:os';
import { canceledError } from './job-guard.js';
import type { ResourceLimits } from './job-limits.js';
import { ScriptStartError } from './script-start-error.js';

/** A process a pool keeps ready (spare-pool.ts holds processes that have not served a job yet). */
export interface PooledProcess {
  readonly alive: boolean;
  onExit(listener: () => void): void;
  /** Idle workers must not keep the service's event loop alive. */
  setIdle(idle: boolean): void;
  dispose(): Promise<void>;
}

/** What the warm pool needs from a process that serves job after job: what it uses, against its limits. */
export interface PoolableWorker extends PooledProcess {
  /** What the process costs now, in bytes (its cgroup's charge or its RSS); read when it is given back. */
  memoryBytes(): number;
  /** The most CPU time one of its processes has used so far, in seconds (RLIMIT_CPU counts per process). */
  cpuSeconds(): number;
  /** The files its interpreter has open now (sockets and pipes included); read after every job. */
  openFiles(): number;
  /** What the files it keeps (its /tmp and /dev/shm) take now, in bytes; read after every job. */
  diskBytes(): number;
  /** The limits of each of its jobs (Jail.limits), which the measures above count against. */
  limits(): ResourceLimits;
}

export interface WarmPoolLimits {
  maxPerKey: number;
  /** Processes kept overall, whatever their size: each holds a uid of the instance's range and pipes. */
  maxTotal: number;
  /** Memory the kept processes may cost together, in bytes, each counted as measured after its last job. */
  memoryBudgetBytes: number;
  idleMs: number;
}

type EvictFirst = 'least-recent' | 'most-recent';

/** How often a busy process's memory is read again (a fresh process is read after its first job). */
const MEASURE_EVERY_MS = 1000;

interface Entry<W> {
  key: string;
  worker: W;
  busy: boolean;
  lastUsed: number;
  idleTimer?: NodeJS.Timeout;
  /** Measured when the process was given back (at most once a `MEASURE_EVERY_MS`); unknown while its first job runs. */
  memory?: number;
  measuredAt?: number;
  /** Its memory as first measured, after its first job. */
  firstMemory?: number;
  /** Its open files after its last job, and after its first; the same for its files' bytes. */
  files?: number;
  firstFiles?: number;
  disk?: number;
  firstDisk?: number;
  /** Its CPU time as last read (see `spentCpu`), and when. */
  cpu?: number;
  cpuMeasuredAt?: number;
  /** Chosen when the process started: whether its key came back after an eviction (a cycle). */
  evictFirst: EvictFirst;
}

/** A worker handed out for one job; give it back with `release`. */
export interface Lease<W> {
  readonly worker: W;
  readonly entry: unknown;
}

type Waiter<W> = (handoff: Entry<W> | undefined) => void;

/**
 * Idle processes keyed by workspace and script version. A key never gets more than `maxPerKey`
 * processes, so extra concurrent jobs queue for one. Idle processes die after `idleMs`. The pool
 * keeps processes while their measured memory together stays within `memoryBudgetBytes` (so many
 * small Python processes stay where few large Node ones would) and their number within
 * `maxTotal`. When one must go, the least recently used idle one goes first — unless the key being
 * started was itself evicted lately. Then the keys in use cycle through more versions than fit
 * (a flow with many steps), where LRU would evict, every time, the very process needed next; the
 * most recently used idle one goes instead, so most of the cycle stays warm and only a few
 * versions take turns. A process is busy while it serves a job, so the pool may exceed its limits
 * briefly; the excess goes when released. A process larger than the whole budget is not kept.
 */
export class WarmPool<W extends PoolableWorker> {
  private readonly entries = new Set<Entry<W>>();
  private readonly starting = new Map<string, number>();
  private readonly waiters = new Map<string, Waiter<W>[]>();
  private readonly disposals = new Set<Promise<void>>();
  /** Keys evicted to make room, oldest first, at most `maxTotal`: one coming back means thrashing. */
  private readonly evicted = new Set<string>();
  private closed = false;
  /** Orders uses; Date.now() would tie within a millisecond. */
  private clock = 0;

  constructor(private readonly limits: WarmPoolLimits) {}

  async acquire(key: string, start: () => Promise<W>, signal: AbortSignal): Promise<Lease<W>> {
    for (;;) {
      if (this.closed) throw new ScriptStartError(canceledError('the runner is shutting down'));
      const idle = [...this.entries].find((e) => e.key === key && !e.busy && e.worker.alive);
      if (idle) return this.lease(idle);
      if (this.countFor(key) < this.limits.maxPerKey) return this.lease(await this.startEntry(key, start));
      const handoff = await this.waitForTurn(key, signal);
      if (handoff) return { worker: handoff.worker, entry: handoff };
    }
  }

  /** Returns a worker after a job; one that is not `reusable` is killed. */
  release(lease: Lease<W>, reusable: boolean): void {
    const entry = lease.entry as Entry<W>;
    if (!reusable || !entry.worker.alive || this.closed || this.mustGo(entry)) {
      this.remove(entry); // a queued job then starts a process of its own
      return;
    }
    const next = this.waiters.get(entry.key)?.shift();
    if (next) return next(entry); // stays busy: handed straight to a queued job
    entry.busy = false;
    entry.lastUsed = ++this.clock;
    entry.worker.setIdle(true);
    entry.idleTimer = setTimeout(() => this.remove(entry), this.limits.idleMs);
    entry.idleTimer.unref();
    this.trimTo(this.limits.maxTotal, this.limits.memoryBudgetBytes, entry.evictFirst);
  }

  /** Measures a process given back, and whether it must be replaced rather than serve another job. */
  private mustGo(entry: Entry<W>): boolean {
    const now = Date.now();
    // A read of a cgroup file per job would tax the fastest runs; memory moves slower than that.
    if (entry.measuredAt === undefined || now - entry.measuredAt >= MEASURE_EVERY_MS) {
      entry.memory = entry.worker.memoryBytes();
      entry.firstMemory ??= entry.memory;
      entry.measuredAt = now;
    }
    // Unlike memory, a job can open or write files faster than any time-based reading would catch
    // (a file left open per job is a thousand a second): both are read after every job (a stat
    // and a statfs).
    entry.files = entry.worker.openFiles();
    entry.firstFiles ??= entry.files;
    entry.disk = entry.worker.diskBytes();
    entry.firstDisk ??= entry.disk;
    const limits = entry.worker.limits();
    // Alone over the memory budget: keeping it would push out every other process for one.
    return (
      entry.memory! > this.limits.memoryBudgetBytes ||
      grewPastHalfTheRoom(entry.firstMemory!, entry.memory!, limits.memoryBytes) ||
      grewPastHalfTheRoom(entry.firstFiles, entry.files, limits.openFiles) ||
      grewPastHalfTheRoom(entry.firstDisk, entry.disk, limits.diskBytes) ||
      spentCpu(entry, limits.cpuSeconds, now)
    );
  }

  /** Kills every process, waiting ones included, and resolves when all are gone. */
  async close(): Promise<void> {
    this.closed = true;
    for (const queue of this.waiters.values()) for (const wake of queue.splice(0)) wake(undefined);
    for (const entry of [...this.entries]) this.remove(entry);
    while (this.disposals.size > 0 || this.starting.size > 0) {
      await Promise.race([...this.disposals, new Promise((r) => setTimeout(r, 20))]);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** What the kept processes cost together, as last measured (an estimate for those not yet measured). */
  get memoryBytes(): number {
    const estimate = this.newcomerEstimate();
    let total = 0;
    for (const entry of this.entries) total += entry.memory ?? estimate;
    return total;
  }

  /** The processes kept (busy and idle). */
  workers(): W[] {
    return [...this.entries].map((e) => e.worker);
  }

  private lease(entry: Entry<W>): Lease<W> {
    clearTimeout(entry.idleTimer);
    entry.busy = true;
    entry.worker.setIdle(false);
    return { worker: entry.worker, entry };
  }

  private async startEntry(key: string, start: () => Promise<W>): Promise<Entry<W>> {
    this.starting.set(key, (this.starting.get(key) ?? 0) + 1);
    const evictFirst: EvictFirst = this.evicted.delete(key) ? 'most-recent' : 'least-recent';
    // Room for the newcomer before it starts, so the start does not happen on top of a full pool.
    this.trimTo(this.limits.maxTotal - 1, this.limits.memoryBudgetBytes - this.newcomerEstimate(), evictFirst);
    let worker: W;
    try {
      worker = await start();
    } finally {
      const left = (this.starting.get(key) ?? 1) - 1;
      if (left > 0) this.starting.set(key, left);
      else this.starting.delete(key);
    }
    const entry: Entry<W> = { key, worker, busy: true, lastUsed: ++this.clock, evictFirst };
    this.entries.add(entry);
    worker.onExit(() => this.remove(entry));
    if (this.closed) {
      this.remove(entry);
      throw new ScriptStartError(canceledError('the runner is shutting down'));
    }
    return entry;
  }

  private waitForTurn(key: string, signal: AbortSignal): Promise<Entry<W> | undefined> {
    return new Promise((resolveTurn, rejectTurn) => {
      const queue = this.waiters.get(key) ?? [];
      this.waiters.set(key, queue);
      const onAbort = () => {
        queue.splice(queue.indexOf(waiter), 1);
        rejectTurn(new ScriptStartError(canceledError()));
      };
      const waiter: Waiter<W> = (handoff) => {
        signal.removeEventListener('abort', onAbort);
        resolveTurn(handoff);
      };
      queue.push(waiter);
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private countFor(key: string): number {
    let count = this.starting.get(key) ?? 0;
    for (const entry of this.entries) if (entry.key === key) count++;
    return count;
  }

  /** A process not measured yet is taken to cost what the measured ones do on average. */
  private newcomerEstimate(): number {
    let total = 0;
    let measured = 0;
    for (const entry of this.entries) {
      if (entry.memory === undefined) continue;
      total += entry.memory;
      measured++;
    }
    return measured === 0 ? 0 : total / measured;
  }

  private trimTo(maxCount: number, maxMemory: number, first: EvictFirst): void {
    const idle = [...this.entries].filter((e) => !e.busy).sort((a, b) => a.lastUsed - b.lastUsed);
    if (first === 'most-recent') idle.reverse();
    let count = this.entries.size;
    let memory = this.memoryBytes;
    const estimate = this.newcomerEstimate();
    for (const entry of idle) {
      if (count <= Math.max(maxCount, 0) && memory <= maxMemory) break;
      count--;
      memory -= entry.memory ?? estimate;
      this.remove(entry);
      this.evicted.add(entry.key);
      if (this.evicted.size > this.limits.maxTotal) this.evicted.delete(this.evicted.values().next().value!);
    }
  }

  private remove(entry: Entry<W>): void {
    if (!this.entries.delete(entry)) return;
    clearTimeout(entry.idleTimer);
    const disposal = entry.worker.dispose().catch(() => undefined);
    this.disposals.add(disposal);
    void disposal.finally(() => this.disposals.delete(disposal));
    // A slot for this key opened up: the next queued job may start a process of its own.
    this.waiters.get(entry.key)?.shift()?.(undefined);
  }
}

/**
 * Whether a process grew, since its first job, by half the room it then had under its jobs' limit
 * of memory, open files or disk. What keeps growing in a warm process (a cache the script fills,
 * the C environment, which keeps every value a job's variables ever had, a file or connection each
 * job opens and never closes, a file each job leaves in /tmp) would otherwise fail some later run
 * with MemoryLimitExceeded, EMFILE or DiskQuotaExceeded, a run that did nothing wrong; a fresh
 * process serves the next run instead. A process that is large from its first job on and stays so
 * is kept.
 */
function grewPastHalfTheRoom(first: number, now: number, limit: number): boolean {
  const room = limit - first;
  // No room at all is no measure of growth: without a cgroup the memory measure is the process
  // tree's RSS, which counts the interpreter's shared pages that the limit does not.
  return room > 0 && now > first + room / 2;
}

/** The most CPU time a process can use in a second of wall time: every core. */
const CORES = availableParallelism();

/**
 * Whether a process has used the CPU time one job may use (`limit`). Its processes may use twice
 * that (see Jail.limits), so one that is kept has a whole job's CPU time left, where a process that
 * had used most of its limit on earlier jobs would fail a later one with CpuLimitExceeded. /proc is
 * read only when the limit could have been reached: since the last read, a process can have used
 * at most every core for the time that passed. /proc counts in 10 ms ticks, rounding down: a job
 * may get up to 20 ms less than its limit.
 */
function spentCpu(entry: Entry<PoolableWorker>, limit: number, now: number): boolean {
  const mostSince = entry.cpuMeasuredAt === undefined ? Infinity : ((now - entry.cpuMeasuredAt) / 1000) * CORES;
  if ((entry.cpu ?? 0) + mostSince >= limit) {
    entry.cpu = entry.worker.cpuSeconds();
    entry.cpuMeasuredAt = now;
  }
  return entry.cpu! >= limit;
}
