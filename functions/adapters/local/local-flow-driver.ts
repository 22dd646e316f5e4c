import { advanceFlow } from '../../core/flows/advance.js';
import { dueSuspendedFlows } from '../../core/flows/timers.js';
import type { WorkerDeps } from '../../core/deps.js';
import type { FlowDriver } from '../../ports.js';

/**
 * The local flow driver: runs the core's flow interpreter in this process, one call at a time per
 * flow (calls for the same flow queue up; different flows go side by side), and polls for due
 * approval timeouts. Everything it needs is in SQLite, so a restart loses nothing: interrupted
 * flow jobs are requeued like any job and pick up where their stored run stands.
 */
export class LocalFlowDriver implements FlowDriver {
  private deps: WorkerDeps | null = null;
  private readonly chains = new Map<string, Promise<void>>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private scanning = false;

  constructor(private readonly timerIntervalMs = 1_000) {}

  start(deps: WorkerDeps): void {
    this.deps = deps;
    this.timer = setInterval(() => void this.fireDueTimeouts(), this.timerIntervalMs);
  }

  async wake(workspaceId: string, flowJobId: string): Promise<void> {
    const deps = this.deps;
    if (!deps) return;
    const previous = this.chains.get(flowJobId) ?? Promise.resolve();
    const next = previous
      .then(() => advanceFlow(deps, workspaceId, flowJobId))
      .catch((e) => console.error(JSON.stringify({ level: 'error', msg: 'flow advance failed', job_id: flowJobId, error: String(e) })));
    this.chains.set(flowJobId, next);
    void next.finally(() => {
      if (this.chains.get(flowJobId) === next) this.chains.delete(flowJobId);
    });
  }

  /** Stops the timer and waits for the interpreter calls under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.deps = null;
    await Promise.all([...this.chains.values()]);
  }

  private async fireDueTimeouts(): Promise<void> {
    if (!this.deps || this.scanning) return;
    this.scanning = true;
    try {
      for (const { workspaceId, flowJobId } of await dueSuspendedFlows(this.deps)) await this.wake(workspaceId, flowJobId);
    } catch (e) {
      console.error(JSON.stringify({ level: 'error', msg: 'flow timer scan failed', error: String(e) }));
    } finally {
      this.scanning = false;
    }
  }
}
