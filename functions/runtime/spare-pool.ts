import type { PooledProcess } from './warm-pool.js';

export interface SparePoolLimits {
  /** Spares kept ready per key. */
  perKey: number;
  /** Spares kept overall; the oldest ready spare of another key makes room for a new one. */
  maxTotal: number;
  /** How long an unused spare lives. */
  idleMs: number;
}

interface Spare<W> {
  ready: Promise<W | undefined>;
  readyAt?: number;
  worker?: W;
  idleTimer?: NodeJS.Timeout;
}

/**
 * Pre-started processes without code, keyed by what a process is bound to before it sees code
 * (workspace, run-as identity, limits, language). Taking one starts its replacement in the
 * background, so the start of a process is paid between jobs rather than inside one. Start
 * failures are not reported here: the job that would have used the spare starts its own process
 * and gets that error.
 */
export class SparePool<W extends PooledProcess> {
  private readonly spares = new Map<string, Spare<W>[]>();
  private readonly pending = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly limits: SparePoolLimits) {}

  /**
   * A ready spare for `key`, else a process started now; either way the spares are topped up, once
   * `refillAfter` settles: a start's synchronous part (the fork, the cgroup's files) would
   * otherwise delay the job that took the spare (a Bash job's answer by ~14 ms).
   */
  async take(key: string, start: () => Promise<W>, refillAfter: Promise<unknown> = Promise.resolve()): Promise<W> {
    const queue = this.spares.get(key) ?? [];
    // Only a spare that has finished starting: waiting on one still starting is no faster than starting.
    const index = queue.findIndex((s) => s.worker?.alive);
    const spare = index >= 0 ? queue.splice(index, 1)[0] : undefined;
    let worker: W;
    if (spare?.worker) {
      clearTimeout(spare.idleTimer);
      worker = spare.worker;
    } else {
      worker = await start();
    }
    worker.setIdle(false);
    // Off the critical path: the job is handed its process first, the next spare starts after.
    void refillAfter.finally(() => setImmediate(() => this.topUp(key, start)));
    return worker;
  }

  /** Kills every spare and waits for those still starting. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.spares.values()].flat();
    this.spares.clear();
    await Promise.all([...all.map((s) => this.discard(s)), ...this.pending]);
  }

  /** The spares that have started (for the Lambda sweep, which must spare them). */
  workers(): W[] {
    return [...this.spares.values()].flat().flatMap((s) => (s.worker ? [s.worker] : []));
  }

  private topUp(key: string, start: () => Promise<W>): void {
    const queue = this.spares.get(key) ?? [];
    this.spares.set(key, queue);
    while (!this.closed && queue.length < this.limits.perKey && this.makeRoom(key)) {
      const spare: Spare<W> = { ready: start().catch(() => undefined) };
      queue.push(spare);
      const settled = spare.ready.then((worker) => this.settle(key, spare, worker));
      this.pending.add(settled);
      void settled.finally(() => this.pending.delete(settled));
    }
  }

  private async settle(key: string, spare: Spare<W>, worker: W | undefined): Promise<void> {
    const queue = this.spares.get(key);
    if (!worker || this.closed || !queue?.includes(spare)) {
      this.forget(key, spare);
      await worker?.dispose();
      return;
    }
    spare.worker = worker;
    spare.readyAt = Date.now();
    worker.setIdle(true);
    // A spare that dies while it waits (killed, out of memory) gives back its jail now, not at idleMs.
    worker.onExit(() => this.retire(key, spare));
    spare.idleTimer = setTimeout(() => this.retire(key, spare), this.limits.idleMs);
    spare.idleTimer.unref();
  }

  /** Forgets a waiting spare and disposes of it (its uid, cgroup and folders go back). */
  private retire(key: string, spare: Spare<W>): void {
    const queue = this.spares.get(key);
    if (!queue?.includes(spare)) return; // taken by a job, or retired already: no longer the pool's
    this.forget(key, spare);
    void this.discard(spare);
  }

  /** Each spare holds a uid of the instance's range: their number stays bounded. */
  private makeRoom(key: string): boolean {
    const all = [...this.spares.entries()].flatMap(([k, queue]) => queue.map((spare) => ({ k, spare })));
    if (all.length < this.limits.maxTotal) return true;
    const oldest = all
      .filter(({ k, spare }) => k !== key && spare.readyAt !== undefined)
      .sort((a, b) => a.spare.readyAt! - b.spare.readyAt!)[0];
    if (!oldest) return false;
    this.forget(oldest.k, oldest.spare);
    void this.discard(oldest.spare);
    return true;
  }

  private forget(key: string, spare: Spare<W>): void {
    const queue = this.spares.get(key);
    if (!queue) return;
    const index = queue.indexOf(spare);
    if (index >= 0) queue.splice(index, 1);
    if (queue.length === 0) this.spares.delete(key);
  }

  private async discard(spare: Spare<W>): Promise<void> {
    clearTimeout(spare.idleTimer);
    const worker = spare.worker ?? (await spare.ready);
    await worker?.dispose();
  }
}
