import { advanceFlow } from '../../core/flows/advance.js';
import type { WorkerDeps } from '../../core/deps.js';
import type { FinishedStep, FlowDriver, Job } from '../../ports.js';
import type { PendingWork } from './pending-work.js';

/**
 * Runs the core's flow interpreter in this process, one call at a time per flow, as the local
 * driver does. Timeouts are not timers: `wakeAt` only notes when a flow wants waking, and
 * `wakeDue` wakes those whose time has come by the injected clock, so a test moves a clock rather
 * than waiting.
 */
export class MemoryFlowDriver implements FlowDriver {
  private deps: WorkerDeps | null = null;
  private readonly chains = new Map<string, Promise<void>>();
  private readonly alarms = new Map<string, { workspaceId: string; at: Date }>();

  constructor(private readonly work: PendingWork) {}

  start(deps: WorkerDeps): void {
    this.deps = deps;
  }

  async dispatch(jobs: Job[]): Promise<void> {
    for (const job of jobs) await this.deps?.queue.enqueue(job);
  }

  async wake(workspaceId: string, flowJobId: string, finishedStep?: FinishedStep): Promise<void> {
    const deps = this.deps;
    if (!deps) return;
    const next = (this.chains.get(flowJobId) ?? Promise.resolve()).then(() => advanceFlow(deps, workspaceId, flowJobId, finishedStep));
    // The chain goes on past a failed call; the failure itself is the PendingWork's to report.
    const chain = next.catch(() => {});
    this.chains.set(flowJobId, chain);
    void chain.then(() => {
      if (this.chains.get(flowJobId) === chain) this.chains.delete(flowJobId);
    });
    this.work.track(next);
  }

  async wakeAt(workspaceId: string, flowJobId: string, at: Date): Promise<void> {
    this.alarms.set(flowJobId, { workspaceId, at });
  }

  /** Wakes every flow whose `wakeAt` time is not after `now`. */
  async wakeDue(now: Date): Promise<void> {
    for (const [flowJobId, { workspaceId, at }] of this.alarms) {
      if (at > now) continue;
      this.alarms.delete(flowJobId);
      await this.wake(workspaceId, flowJobId);
    }
  }
}
