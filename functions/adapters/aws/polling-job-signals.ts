import { EventEmitter } from 'node:events';
import type { JobSignals } from '../../ports.js';

/**
 * On AWS a job changes in another Lambda, which cannot wake this one: `wait` is the poll timer
 * (the core re-reads the job from DynamoDB when it fires). `notify` still wakes waiters in this
 * same process at once: the worker's own cancel watcher, an SSE stream next to a cancel request.
 */
export class PollingJobSignals implements JobSignals {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  notify(jobId: string): void {
    this.emitter.emit(jobId);
  }

  wait(jobId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.emitter.off(jobId, done);
        resolve();
      };
      // Not unref'd, unlike the local shell's safety net: here the timer is the poll itself.
      const timer = setTimeout(done, ms);
      this.emitter.once(jobId, done);
    });
  }
}
