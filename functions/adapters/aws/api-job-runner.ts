import { AsyncLocalStorage } from 'node:async_hooks';
import type { WorkerDeps } from '../../core/deps.js';
import { errorText, log } from '../../core/common/logger.js';
import { executeJob } from '../../core/runs/worker.js';
import type { Job, JobRef, JobSlot, RunIntent } from '../../ports.js';
import { TableStreamJobQueue } from './job-outbox.js';

/**
 * Time kept after a job's own timeout to store its outcome before the api function's timeout.
 * The sandbox stops the job at its timeout and reports at once; storing takes a few writes.
 */
export const OUTCOME_MARGIN_MS = 30_000;

/** One api invocation: how long it may still run, and the jobs it runs for its caller. */
interface Invocation {
  remainingMs(): number;
  runs: Set<Promise<void>>;
}

/**
 * The api function's job queue. A job whose caller waits for it (a sync webhook, an SSE stream)
 * runs here, in the invocation holding the request: stored `running` before it starts, its code
 * run by the same sandbox functions (and tenant) the worker uses, its logs and outcome stored as
 * the worker stores them. The request was billed anyway; the worker and the SQS round trip are
 * not needed, so a script-second is billed in the api and the sandbox only.
 *
 * Only a job the invocation can hold to its end runs here: its timeout plus OUTCOME_MARGIN_MS must
 * fit in the invocation's remaining time. Then the invocation lasts until the job is finished and
 * stored, even when its caller was answered earlier (a 504 at the sync wait limit, a closed SSE
 * stream), so nothing it accepted is left half done; if the function dies anyway, the reaper fails
 * the `running` job (JobWorkerLost). Every other job is stored `queued` and goes the usual way
 * (the table's stream, the dispatcher, SQS, the worker).
 */
export class ApiJobRunner extends TableStreamJobQueue {
  private readonly invocations = new AsyncLocalStorage<Invocation>();
  private deps: WorkerDeps | null = null;

  /** The runner and the core need each other; the core's deps are attached once built. */
  start(deps: WorkerDeps): void {
    this.deps = deps;
  }

  reserve(_job: JobRef, intent: RunIntent): JobSlot | null {
    const invocation = this.invocations.getStore();
    if (!intent.callerWaits || !this.deps || !invocation) return null;
    if (intent.timeoutMs + OUTCOME_MARGIN_MS > invocation.remainingMs()) return null;
    const deps = this.deps;
    return {
      run: (job: Job) => {
        const run = executeJob(deps, job.id, job).catch((e: unknown) => log.error('job execution failed', { job_id: job.id, workspace_id: job.workspace_id, error: errorText(e) }));
        invocation.runs.add(run);
      },
      cancel: () => {},
    };
  }

  /**
   * Runs `handle` as one invocation with `remainingMs` left, and resolves once every job it
   * started here is finished and stored: once the handler has returned, Lambda may freeze the
   * environment with any other work still pending (from Node.js 24 on it never waits for it).
   */
  async within<T>(remainingMs: () => number, handle: () => Promise<T>): Promise<T> {
    const invocation: Invocation = { remainingMs, runs: new Set() };
    try {
      return await this.invocations.run(invocation, handle);
    } finally {
      await Promise.allSettled(invocation.runs);
    }
  }
}
