/**
 * Work started in the background by the in-memory shell (job runs, flow interpreter calls), kept so
 * that a caller can wait until everything set in motion has finished, and learn of a failure
 * instead of it vanishing into a log line.
 */
export class PendingWork {
  private readonly running = new Set<Promise<unknown>>();
  private readonly failures: unknown[] = [];

  track(work: Promise<unknown>): void {
    const tracked = work.catch((e) => void this.failures.push(e)).finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  /** Resolves once nothing runs, including work started by work that was running; throws the first failure. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
    const failure = this.failures.shift();
    if (failure !== undefined) throw failure;
  }
}
