import type { JobError } from '../ports.js';

export interface JobLimits {
  timeoutMs: number;
  maxOutputBytes: number;
}

/** How often a running job's limits are looked at: a fork bomb stops within this. */
const WATCH_INTERVAL_MS = 200;

export function canceledError(message = 'job was canceled'): JobError {
  return { name: 'Canceled', message };
}

/**
 * Watches the three reasons to stop a job from outside: its timeout, a cancel request, and too
 * much output. The first one to happen wins; `stopped` resolves with it so the caller can kill.
 */
export class JobGuard {
  readonly stopped: Promise<JobError>;
  private stopReason: JobError | undefined;
  private outputBytes = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly poller: NodeJS.Timeout | undefined;
  private readonly onAbort: () => void;
  private resolveStopped!: (error: JobError) => void;

  constructor(
    private readonly limits: JobLimits,
    private readonly signal: AbortSignal,
    /** A resource limit the job hit (e.g. its process limit), polled while it runs. */
    watch?: () => JobError | undefined,
  ) {
    this.stopped = new Promise((resolveStop) => (this.resolveStopped = resolveStop));
    this.timer = setTimeout(() => {
      this.stop({ name: 'TimeoutError', message: `job exceeded its timeout of ${limits.timeoutMs / 1000}s` });
    }, limits.timeoutMs);
    if (watch) {
      this.poller = setInterval(() => {
        const hit = watch();
        if (hit) this.stop(hit);
      }, WATCH_INTERVAL_MS);
      this.poller.unref();
    }
    this.onAbort = () => this.stop(canceledError());
    if (signal.aborted) this.onAbort();
    else signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Set once the job has to stop; checked again after a result arrived in the same tick. */
  get reason(): JobError | undefined {
    return this.stopReason;
  }

  countOutput(text: string): void {
    this.outputBytes += Buffer.byteLength(text);
    if (this.outputBytes > this.limits.maxOutputBytes) this.outputExceeded();
  }

  /** Output went past the limit before it could be counted (a line that never ended). */
  outputExceeded(): void {
    this.stop(outputLimitError(this.limits.maxOutputBytes));
  }

  dispose(): void {
    clearTimeout(this.timer);
    clearInterval(this.poller);
    this.signal.removeEventListener('abort', this.onAbort);
  }

  private stop(error: JobError): void {
    if (this.stopReason) return;
    this.stopReason = error;
    this.dispose();
    this.resolveStopped(error);
  }
}

/** Keeps the end of a job's output for error messages, without holding all of it. */
export class OutputTail {
  private text = '';

  constructor(private readonly maxChars = 4000) {}

  push(chunk: string): void {
    this.text = (this.text + chunk).slice(-this.maxChars);
  }

  lastLines(count = 20): string {
    return this.text.trimEnd().split('\n').slice(-count).join('\n');
  }
}

/** A job that wrote more than its output limit (counted here, or by its process's reply channel). */
export function outputLimitError(maxOutputBytes: number): JobError {
  return { name: 'OutputLimitExceeded', message: `job output exceeded the limit of ${maxOutputBytes} bytes` };
}
