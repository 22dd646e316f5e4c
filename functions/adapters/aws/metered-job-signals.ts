import type { FinishedJob, JobSignals } from '../../ports.js';
import { countJobFinished } from './powertools.js';

/**
 * The job signals of the AWS shell, counting each job that reaches a final status as it is stored
 * (the core hands `finished` to `notify` exactly once, from whoever stored it): the dashboard's
 * jobs by status. Jobs failed or canceled without a run (a cancel, the reaper, the DLQ consumer)
 * are not counted here; their functions' alarms and logs cover them.
 */
export class MeteredJobSignals implements JobSignals {
  constructor(
    private readonly inner: JobSignals,
    private readonly count: (status: string) => void = countJobFinished,
  ) {}

  notify(jobId: string, finished?: FinishedJob): void {
    if (finished) this.count(finished.status);
    this.inner.notify(jobId, finished);
  }

  wait(jobId: string, ms: number): Promise<FinishedJob | undefined> {
    return this.inner.wait(jobId, ms);
  }
}
