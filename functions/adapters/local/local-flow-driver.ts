import { advanceFlow } from '../../core/flows/advance.js';
import { dueSuspendedFlows, runsWithPendingNotices } from '../../core/flows/timers.js';
import type { WorkerDeps } from '../../core/deps.js';
import type { FinishedStep, FlowDriver, Job } from '../../ports.js';
import { errorText, log } from '../../core/common/logger.js';

/** setTimeout's limit (about 24.8 days); a later time is reached in hops. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The local flow driver: runs the core's flow interpreter in this process, one call at a time per
 * flow (calls for the same flow queue up; different flows go side by side), and keeps timers for
 * approval timeouts. Everything it needs is in SQLite, so a restart loses nothing: interrupted
 * flow jobs are requeued like any job, and on start every suspended flow is woken once, which
 * fires the timeouts that fell due while the process was down and re-arms the others, and so is
 * every flow at a ConsentGate whose notices a crash left unsent.
 */
export class LocalFlowDriver implements FlowDriver {
  private deps: WorkerDeps | null = null;
  private readonly chains = new Map<string, Promise<void>>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  async start(deps: WorkerDeps): Promise<void> {
    this.deps = deps;
    const waiting = new Map<string, string>();
    for (const w of [...(await dueSuspendedFlows(deps, { includeFuture: true })), ...(await runsWithPendingNotices(deps))]) waiting.set(w.flowJobId, w.workspaceId);
    for (const [flowJobId, workspaceId] of waiting) await this.wake(workspaceId, flowJobId);
  }

  /** Steps go through the queue table like any job, so a crash never loses one. */
  async dispatch(jobs: Job[]): Promise<void> {
    const deps = this.deps;
    if (!deps) return;
    for (const job of jobs) await deps.queue.enqueue(job);
  }

  async wake(workspaceId: string, flowJobId: string, finishedStep?: FinishedStep): Promise<void> {
    const deps = this.deps;
    if (!deps) return;
    const previous = this.chains.get(flowJobId) ?? Promise.resolve();
    const next = previous
      .then(() => advanceFlow(deps, workspaceId, flowJobId, finishedStep))
      .catch((e) => log.error('flow advance failed', { job_id: flowJobId, workspace_id: workspaceId, error: errorText(e) }));
    this.chains.set(flowJobId, next);
    void next.finally(() => {
      if (this.chains.get(flowJobId) === next) this.chains.delete(flowJobId);
    });
  }

  async wakeAt(workspaceId: string, flowJobId: string, at: Date): Promise<void> {
    if (!this.deps) return;
    clearTimeout(this.timers.get(flowJobId));
    const timer = setTimeout(() => {
      this.timers.delete(flowJobId);
      void this.wake(workspaceId, flowJobId);
    }, Math.min(MAX_TIMER_MS, Math.max(0, at.getTime() - Date.now())));
    // A pending timeout must not keep a stopping process alive; the next start re-arms it.
    timer.unref();
    this.timers.set(flowJobId, timer);
  }

  /** Drops the timers and waits for the interpreter calls under way. */
  async stop(): Promise<void> {
    this.deps = null;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.chains.values()]);
  }
}
