import { executeJob } from '../../core/runs/worker.js';
import type { WorkerDeps } from '../../core/deps.js';
import type { Job, JobQueue } from '../../ports.js';
import type { PendingWork } from './pending-work.js';

/**
 * Runs each enqueued job at once in this process, with no limit on how many run side by side.
 * Before `start` nothing runs and jobs stay `queued` in the store, as they would in a queue nobody
 * reads yet.
 */
export class MemoryJobQueue implements JobQueue {
  private deps: WorkerDeps | null = null;

  constructor(private readonly work: PendingWork) {}

  /** The queue and the core need each other; the core's deps are attached once built. */
  start(deps: WorkerDeps): void {
    this.deps = deps;
  }

  async enqueue(job: Job): Promise<void> {
    if (this.deps) this.work.track(executeJob(this.deps, job.id));
  }
}
