import { LambdaClient } from '@aws-sdk/client-lambda';
import middy from '@middy/core';
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { WorkerDeps } from '../core/deps.js';
import { executeJob } from '../core/worker.js';
import { advanceFlow } from '../core/flows/advance.js';
import { requireSandboxFunctions } from '../adapters/aws/aws-config.js';
import { createLambdaSandboxRunner, lambdaInvoke } from '../adapters/aws/lambda-sandbox-runner.js';
import type { SandboxInvoke } from '../adapters/aws/sandbox-protocol.js';
import { decodeJobMessage } from '../adapters/aws/sqs-job-queue.js';
import { awsShell, once, type AwsShell } from './aws-deps.js';

/**
 * The worker Lambda: each SQS record names a job, which the core runs through a sandbox Lambda.
 * Records of a batch run side by side. One whose processing throws is reported as a batch item
 * failure, so SQS redelivers it (then parks it in the DLQ) while the others are done with.
 * Redeliveries are harmless: the core only runs a job it claims, from `queued` or from a worker
 * whose lease ran out (it died mid-run).
 */
export function createWorkerHandler(sandboxInvoker: (shell: AwsShell) => SandboxInvoke) {
  const workerDeps = once(async (): Promise<WorkerDeps> => {
    const shell = await awsShell();
    return { ...shell.deps, runner: createLambdaSandboxRunner(sandboxInvoker(shell)) };
  });

  const runJobs = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const deps = await workerDeps();
    const settled = await Promise.allSettled(
      event.Records.map(async (record) => {
        const message = decodeJobMessage(record.body);
        return message.action === 'advance' ? advanceFlow(deps, message.workspaceId, message.jobId) : executeJob(deps, message.jobId);
      }),
    );
    // What the middleware expects: it answers Lambda with `{ batchItemFailures }` in their place.
    return settled as unknown as SQSBatchResponse;
  };

  return middy<SQSEvent, SQSBatchResponse>(runJobs).use(sqsPartialBatchFailure({ logger: logRecordFailure }));
}

/** One JSON line per failed record (the function logs in JSON): which message, and why. */
function logRecordFailure(reason: unknown, record: SQSRecord): void {
  const error = reason instanceof Error ? reason.message : String(reason);
  console.error(JSON.stringify({ level: 'error', msg: 'job record failed; SQS will redeliver it', message_id: record.messageId, receive_count: record.attributes.ApproximateReceiveCount, error }));
}

/** On AWS the sandboxes are Lambda functions whose role has no permissions. */
export const handler = createWorkerHandler((shell) => lambdaInvoke(new LambdaClient({}), requireSandboxFunctions(shell.config)));
