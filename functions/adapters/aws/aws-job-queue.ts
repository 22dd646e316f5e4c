import type { Job, JobQueue } from '../../ports.js';
import type { SqsJobQueue } from './sqs-job-queue.js';
import type { StepFunctionsFlowRunner } from './step-functions-flow-runner.js';

/**
 * Where an accepted job goes on AWS: a flow job becomes an execution of the flow-runner state
 * machine; any other job a message on the jobs queue for the worker Lambda.
 */
export class AwsJobQueue implements JobQueue {
  constructor(
    private readonly scripts: SqsJobQueue,
    private readonly flows: StepFunctionsFlowRunner,
  ) {}

  async enqueue(job: Job): Promise<void> {
    await (job.kind === 'flow' ? this.flows.start(job) : this.scripts.enqueue(job));
  }
}
