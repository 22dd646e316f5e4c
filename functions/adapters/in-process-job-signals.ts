import type { FinishedJob, JobSignals } from '../ports.js';

/**
 * Wakes waiters of a job in this process the moment it changes; otherwise `wait` ends after its
 * timeout and the core re-reads the job. In the local shell every change happens in this process,
 * so the timeout is only a safety net. On AWS a job changes in another Lambda, which cannot wake
 * this one: there the timeout is the poll interval, and `notify` still wakes this process's own
 * waiters (the worker's cancel watcher, an SSE stream next to a cancel request).
 */
export class InProcessJobSignals implements JobSignals {
  /**
   * Each job's waiters. A Map of sets, not an EventEmitter keyed by job id: every job added and
   * removed an event name of one emitter's listener object, which V8 keeps as a dictionary, at
   * ~10 us of the service's thread per sync run under load (CPU profile of 16 clients).
   */
  private readonly waiters = new Map<string, Set<Waiter>>();

  /**
   * `holdProcess`: whether a pending wait keeps the process alive. Locally it must not keep `svc`
   * from exiting; in Lambda an emptied event loop would end the invocation mid-poll.
   */
  constructor(private readonly opts: { holdProcess: boolean }) {}

  notify(jobId: string, finished?: FinishedJob): void {
    const woken = this.waiters.get(jobId);
    if (!woken) return;
    // Those who start waiting while these wake wait for the next notify.
    this.waiters.delete(jobId);
    for (const wake of woken) wake(finished);
  }

  wait(jobId: string, ms: number): Promise<FinishedJob | undefined> {
    return new Promise((resolve) => {
      let waiting = this.waiters.get(jobId);
      if (!waiting) this.waiters.set(jobId, (waiting = new Set()));
      const woken: Waiter = (finished) => {
        clearTimeout(timer);
        resolve(finished);
      };
      const timer = setTimeout(() => {
        waiting.delete(woken);
        if (waiting.size === 0 && this.waiters.get(jobId) === waiting) this.waiters.delete(jobId);
        resolve(undefined);
      }, ms);
      if (!this.opts.holdProcess) timer.unref();
      waiting.add(woken);
    });
  }
}

type Waiter = (finished?: FinishedJob) => void;
