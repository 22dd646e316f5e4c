import { executeJob, leaseUntil } from '../../core/runs/worker.js';
import type { WorkerDeps } from '../../core/deps.js';
import type { Job, JobQueue, JobRef, JobSlot, RunIntent } from '../../ports.js';
import type { SqliteStore } from './sqlite-store.js';
import { turnOrder } from './fair-turns.js';
import { errorText, log } from '../../core/common/logger.js';

export interface PoolOptions {
  /** How long a caller that waits for the result may wait in memory for a worker (see `reserve`). */
  callerWaitMs?: number;
  /** Runs one job (the core's worker); a test may watch the pool's decisions with its own. */
  execute?: typeof executeJob;
}

/** At most this many callers per worker wait in memory; later ones go through the queue table. */
const CALLERS_PER_WORKER = 4;
/** After a failed claim of queued jobs, the next try: nothing else may come to wake the pool. */
const CLAIM_RETRY_MS = 100;

interface WaitingCaller {
  jobId: string;
  workspaceId: string;
  since: number;
  grant(slot: JobSlot | null): void;
}

/**
 * The local queue: the jobs table is the durable queue, and this pool runs up to `concurrency`
 * jobs at once in the same process. `enqueue` only wakes the pool; a job the pool has no slot for
 * stays `queued` in SQLite until one frees up (or until the next start, after a crash).
 */
export class LocalWorkerPool implements JobQueue {
  /** The jobs running here, each with its workspace. */
  private readonly inFlight = new Map<string, string>();
  /** Each workspace's turns (fair-turns.ts): how many of its jobs run here, and when it was last given a worker. */
  private readonly turns = { running: new Map<string, number>(), lastServed: new Map<string, number>() };
  private served = 0;
  private deps: WorkerDeps | null = null;
  private stopped = false;
  /** Whether SQLite may hold queued jobs the pool has not taken; saves a query per finished job. */
  private backlog = true;
  private idleWaiters: Array<() => void> = [];
  /** Callers waiting in memory for a worker, oldest first; all older than anything queued in SQLite. */
  private waiting: WaitingCaller[] = [];
  private waitTimer: NodeJS.Timeout | null = null;
  private claimRetry: NodeJS.Timeout | null = null;
  private readonly callerWaitMs: number;
  private readonly executeJob: typeof executeJob;

  constructor(
    private readonly store: SqliteStore,
    private readonly concurrency: number,
    options: PoolOptions = {},
  ) {
    this.callerWaitMs = options.callerWaitMs ?? 250;
    this.executeJob = options.execute ?? executeJob;
  }

  /** The pool and the core need each other; the core's deps are attached once built. */
  start(deps: WorkerDeps): void {
    this.deps = deps;
    this.fill();
  }

  /**
   * A free worker for a new job, unless older queued jobs wait for one (they go first). When every
   * worker is busy, a caller that waits for the result anyway (a sync webhook, an SSE stream)
   * waits here, in arrival order, for the next free worker, up to `callerWaitMs`: its job is then
   * stored once, already running, instead of stored queued and claimed again, which saves a third
   * of a run's SQLite writes under load. Nothing has been acknowledged meanwhile, so a crash loses
   * nothing accepted. A caller still waiting after that time goes through the queue table, and so
   * does every caller after it until that backlog is gone; the table is taken oldest first by
   * creation (SqliteStore.claimQueued), so a caller stored late still keeps its turn.
   */
  reserve(job: JobRef, intent: RunIntent): JobSlot | null | Promise<JobSlot | null> {
    if (!this.deps || this.stopped || this.backlog || this.inFlight.has(job.id)) return null;
    if (this.inFlight.size < this.concurrency && this.waiting.length === 0) return this.hold(job.id, job.workspace_id);
    if (!intent.callerWaits || this.waiting.length >= this.concurrency * CALLERS_PER_WORKER) return null;
    this.waitTimer ??= setTimeout(() => this.checkWaiting(), this.callerWaitMs).unref();
    return new Promise((grant) => this.waiting.push({ jobId: job.id, workspaceId: job.workspace_id, since: performance.now(), grant }));
  }

  async enqueue(job: Job): Promise<void> {
    // Not started or stopping: the job waits in SQLite for the next start.
    if (!this.deps || this.stopped) return;
    if (this.inFlight.size >= this.concurrency) this.backlog = true;
    // Older queued jobs go first; the new one is among them in SQLite.
    else if (this.backlog) this.fill();
    else this.dispatch(job.id, job.workspace_id);
  }

  /** Stops taking jobs and waits for the running ones; callers still waiting are queued for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.claimRetry) clearTimeout(this.claimRetry);
    this.claimRetry = null;
    this.releaseWaiting();
    if (this.inFlight.size === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private hold(jobId: string, workspaceId: string): JobSlot {
    this.track(jobId, workspaceId);
    return {
      run: (job) => this.execute(job.id, job),
      cancel: () => this.settle(jobId),
    };
  }

  /** One timer for all waiting callers: it fires when the oldest has waited its time. */
  private checkWaiting(): void {
    this.waitTimer = null;
    const oldest = this.waiting[0];
    if (!oldest) return;
    const left = oldest.since + this.callerWaitMs - performance.now();
    if (left <= 0) this.releaseWaiting();
    else this.waitTimer = setTimeout(() => this.checkWaiting(), left).unref();
  }

  /** Every caller still waiting goes through the queue table, in arrival order, ahead of later callers. */
  private releaseWaiting(): void {
    if (this.waitTimer) clearTimeout(this.waitTimer);
    this.waitTimer = null;
    if (this.waiting.length === 0) return;
    this.backlog = true;
    for (const w of this.waiting.splice(0)) w.grant(null);
  }

  private fill(): void {
    if (!this.deps || this.stopped || !this.backlog) return;
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return;
    // Claimed here, oldest first, in one statement: the worker gets them already running.
    const now = this.deps.clock.now();
    let jobs: Job[];
    try {
      jobs = this.store.claimQueued(free, now.toISOString(), leaseUntil(now, this.deps.config), this.turns);
    } catch (e) {
      // fill() runs when a job ends, inside that job's promise chain: a throw here would escape
      // it, and the queued jobs would wait for a wake-up that may never come.
      log.error('claiming queued jobs failed; trying again', { error: errorText(e) });
      this.claimRetry ??= setTimeout(() => {
        this.claimRetry = null;
        this.fill();
      }, CLAIM_RETRY_MS).unref();
      return;
    }
    // Fewer than asked for: everything queued is now in flight.
    if (jobs.length < free) this.backlog = false;
    for (const job of jobs) {
      this.track(job.id, job.workspace_id);
      this.execute(job.id, job);
    }
  }

  private dispatch(id: string, workspaceId: string): void {
    if (this.inFlight.has(id) || !this.deps) return;
    this.track(id, workspaceId);
    this.execute(id);
  }

  private track(id: string, workspaceId: string): void {
    this.inFlight.set(id, workspaceId);
    this.turns.running.set(workspaceId, (this.turns.running.get(workspaceId) ?? 0) + 1);
    this.turns.lastServed.set(workspaceId, ++this.served);
  }

  private execute(id: string, claimed?: Job): void {
    if (!this.deps) return this.settle(id);
    this.executeJob(this.deps, id, claimed)
      .catch((e) => log.error('job execution failed', { job_id: id, error: errorText(e) }))
      .finally(() => this.settle(id));
  }

  private settle(id: string): void {
    const workspaceId = this.inFlight.get(id);
    if (workspaceId === undefined) return;
    this.inFlight.delete(id);
    const left = (this.turns.running.get(workspaceId) ?? 1) - 1;
    if (left > 0) this.turns.running.set(workspaceId, left);
    else this.turns.running.delete(workspaceId);
    if (this.stopped && this.inFlight.size === 0) this.idleWaiters.splice(0).forEach((w) => w());
    // A caller waiting in memory came before anything queued in the table (see `reserve`).
    const next = this.stopped ? undefined : this.nextWaiting();
    if (next) next.grant(this.hold(next.jobId, next.workspaceId));
    else this.fill();
  }

  /**
   * The waiting caller whose workspace's turn comes first (fair-turns.ts), the longest waiting
   * among equals: the order the queue table is claimed in.
   */
  private nextWaiting(): WaitingCaller | undefined {
    if (this.waiting.length === 0) return undefined;
    let best = 0;
    for (let i = 1; i < this.waiting.length; i++) if (turnOrder(this.waiting[i].workspaceId, this.waiting[best].workspaceId, this.turns) < 0) best = i;
    return this.waiting.splice(best, 1)[0];
  }

}
