import middy from '@middy/core';
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { WorkerDeps } from '../core/deps.js';
import { executeJob } from '../core/runs/worker.js';
import { isFinished } from '../core/jobs/jobs.js';
import type { SandboxInvoke } from '../adapters/aws/sandbox-protocol.js';
import { decodeJobMessage } from '../adapters/aws/sqs-job-queue.js';
import { awsShell, lambdaSandboxes, once, type AwsShell } from '../shells/aws.js';
import { errorText, log, type LogFields } from '../core/common/logger.js';

/**
 * The worker Lambda: each SQS record names a job, which the core runs through a sandbox Lambda
 * (a flow's step job also carries its execution's task token, completed when the job is done).
 * Records of a batch run side by side. One whose processing throws is reported as a batch item
 * failure, so SQS redelivers it (then parks it in the DLQ) while the others are done with.
 * Redeliveries are harmless: the core only runs a job it claims, from `queued` or from a worker
 * whose lease ran out (it died mid-run).
 */
export function createWorkerHandler(sandboxInvoker: (shell: AwsShell) => SandboxInvoke) {
  const worker = once(async (): Promise<{ deps: WorkerDeps; shell: AwsShell }> => {
    const shell = await awsShell();
    return { shell, deps: { ...shell.deps, runner: shell.sandboxRunner(sandboxInvoker(shell)) } };
  });

  const runJob = async (record: SQSRecord): Promise<void> => {
    const { deps, shell } = await worker();
    const message = decodeJobMessage(record.body);
    await executeJob(deps, message.jobId);
    if (!message.taskToken) return;
    // A flow's step: its execution goes on once the job has finished. Not finished means another
    // delivery of this message holds the job; that one completes the token.
    const job = await deps.store.getJob(message.workspaceId, message.jobId);
    if (!job || isFinished(job.status)) await shell.flowRunner.completeTask(message.taskToken);
  };

  const runJobs = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const settled = await Promise.allSettled(event.Records.map(runJob));
    // What the middleware expects: it answers Lambda with `{ batchItemFailures }` in their place.
    return settled as unknown as SQSBatchResponse;
  };

  return middy<SQSEvent, SQSBatchResponse>(runJobs).use(sqsPartialBatchFailure({ logger: logRecordFailure }));
}

/** One JSON line per failed record (the function logs in JSON): which message, and why. */
function logRecordFailure(reason: unknown, record: SQSRecord): void {
  log.error('job record failed; SQS will redeliver it', { ...jobOf(record), message_id: record.messageId, receive_count: record.attributes.ApproximateReceiveCount, error: errorText(reason) });
}

/** The job a record names, when its body can be read (an unreadable body may be the failure). */
function jobOf(record: SQSRecord): LogFields {
  try {
    const { jobId, workspaceId } = decodeJobMessage(record.body);
    return { job_id: jobId, workspace_id: workspaceId };
  } catch {
    return {};
  }
}

export const handler = createWorkerHandler(lambdaSandboxes);
