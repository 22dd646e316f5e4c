import { EventEmitter } from 'node:events';
import type { JobSignals } from '../../ports.js';

/** In one process a waiter is woken the moment its job changes; the timeout is only a safety net. */
export class LocalJobSignals implements JobSignals {
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
      const timer = setTimeout(done, ms);
      timer.unref();
      this.emitter.once(jobId, done);
    });
  }
}
