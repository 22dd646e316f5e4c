import { executeJob, leaseUntil } from '../../core/worker.js';
import type { WorkerDeps } from '../../core/deps.js';
import type { Job, JobQueue, JobSlot } from '../../ports.js';
import type { SqliteStore } from './sqlite-store.js';
import { errorText, log } from '../../core/logger.js';

/**
 * The local queue: the jobs table is the durable queue, and this pool runs up to `concurrency`
 * jobs at once in the same process. `enqueue` only wakes the pool; a job the pool has no slot for
 * stays `queued` in SQLite until one frees up (or until the next start, after a crash).
 */
export class LocalWorkerPool implements JobQueue {
  private readonly inFlight = new Set<string>();
  private deps: WorkerDeps | null = null;
  private stopped = false;
  /** Whether SQLite may hold queued jobs the pool has not taken; saves a query per finished job. */
  private backlog = true;
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

  /** A free slot, unless older queued jobs wait for one (they go first). */
  reserve(jobId: string): JobSlot | null {
    if (!this.deps || this.stopped || this.backlog || this.inFlight.size >= this.concurrency || this.inFlight.has(jobId)) return null;
    this.inFlight.add(jobId);
    return {
      run: (job) => this.execute(job.id, job),
      cancel: () => this.settle(jobId),
    };
  }

  async enqueue(job: Job): Promise<void> {
    // Not started or stopping: the job waits in SQLite for the next start.
    if (!this.deps || this.stopped) return;
    if (this.inFlight.size >= this.concurrency) this.backlog = true;
    // Older queued jobs go first; the new one is among them in SQLite.
    else if (this.backlog) this.fill();
    else this.dispatch(job.id);
  }

  /** Stops taking jobs and waits for the running ones. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.inFlight.size === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private fill(): void {
    if (!this.deps || this.stopped || !this.backlog) return;
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return;
    // Claimed here, oldest first, in one statement: the worker gets them already running.
    const now = this.deps.clock.now();
    const jobs = this.store.claimQueued(free, now.toISOString(), leaseUntil(now, this.deps.config));
    // Fewer than asked for: everything queued is now in flight.
    if (jobs.length < free) this.backlog = false;
    for (const job of jobs) {
      this.inFlight.add(job.id);
      this.execute(job.id, job);
    }
  }

  private dispatch(id: string): void {
    if (this.inFlight.has(id) || !this.deps) return;
    this.inFlight.add(id);
    this.execute(id);
  }

  private execute(id: string, claimed?: Job): void {
    if (!this.deps) return this.settle(id);
    executeJob(this.deps, id, claimed)
      .catch((e) => log.error('job execution failed', { job_id: id, error: errorText(e) }))
      .finally(() => this.settle(id));
  }

  private settle(id: string): void {
    this.inFlight.delete(id);
    if (this.stopped && this.inFlight.size === 0) this.idleWaiters.splice(0).forEach((w) => w());
    this.fill();
  }
}
