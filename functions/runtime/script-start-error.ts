import type { JobError } from '../ports.js';

/** The script could not be prepared (e.g. it does not compile): a job failure, not a runner fault. */
export class ScriptStartError extends Error {
  constructor(readonly jobError: JobError) {
    super(jobError.message);
    this.name = jobError.name;
  }
}
