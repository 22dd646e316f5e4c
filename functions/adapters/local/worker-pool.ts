import { executeJob } from '../../core/worker.js';
import type { WorkerDeps } from '../../core/deps.js';
import type { Job, JobQueue } from '../../ports.js';
import type { SqliteStore } from './sqlite-store.js';

/**
 * The local queue: the jobs table is the durable queue, and this pool runs up to `concurrency`
 * jobs at once in the same process. `enqueue` only wakes the pool; a job the pool has no slot for
 * stays `queued` in SQLite until one frees up (or until the next start, after a crash).
 */
export class LocalWorkerPool implements JobQueue {
  private readonly inFlight = new Set<string>();
  private deps: WorkerDeps | null = null;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly store: SqliteStore,
    private readonly concurrency: number,
  ) {}

  /** The pool and the core need each other; the core's deps are attached once built. */
  start(deps: WorkerDeps): void {
    this.deps = deps;
    this.fill();
  }

  async enqueue(job: Job): Promise<void> {
    if (!this.deps || this.stopped) return;
    if (this.inFlight.size < this.concurrency) this.dispatch(job.id);
  }

  /** Stops taking jobs and waits for the running ones. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.inFlight.size === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private fill(): void {
    if (!this.deps || this.stopped) return;
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return;
    for (const id of this.store.queuedJobIds(free, this.inFlight)) this.dispatch(id);
  }

  private dispatch(id: string): void {
    if (this.inFlight.has(id) || !this.deps) return;
    this.inFlight.add(id);
    executeJob(this.deps, id)
      .catch((e) => console.error(JSON.stringify({ level: 'error', msg: 'job execution failed', job_id: id, error: String(e) })))
      .finally(() => {
        this.inFlight.delete(id);
        if (this.stopped && this.inFlight.size === 0) this.idleWaiters.splice(0).forEach((w) => w());
        this.fill();
      });
  }
}
