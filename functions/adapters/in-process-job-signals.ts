import { EventEmitter } from 'node:events';
import type { FinishedJob, JobSignals } from '../ports.js';

/**
 * Wakes waiters of a job in this process the moment it changes; otherwise `wait` ends after its
 * timeout and the core re-reads the job. In the local shell every change happens in this process,
 * so the timeout is only a safety net. On AWS a job changes in another Lambda, which cannot wake
 * this one: there the timeout is the poll interval, and `notify` still wakes this process's own
 * waiters (the worker's cancel watcher, an SSE stream next to a cancel request).
 */
export class InProcessJobSignals implements JobSignals {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  /**
   * `holdProcess`: whether a pending wait keeps the process alive. Locally it must not keep `svc`
   * from exiting; in Lambda an emptied event loop would end the invocation mid-poll.
   */
  constructor(private readonly opts: { holdProcess: boolean }) {}

  notify(jobId: string, finished?: FinishedJob): void {
    this.emitter.emit(jobId, finished);
  }

  wait(jobId: string, ms: number): Promise<FinishedJob | undefined> {
    return new Promise((resolve) => {
      const done = (finished?: FinishedJob) => {
        clearTimeout(timer);
        this.emitter.off(jobId, done);
        resolve(finished);
      };
      const timer = setTimeout(() => done(), ms);
      if (!this.opts.holdProcess) timer.unref();
      this.emitter.once(jobId, done);
    });
  }
}
