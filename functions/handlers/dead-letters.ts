import middy from '@middy/core';
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { decodeJobMessage } from '../adapters/aws/sqs-job-queue.js';
import { errorText, log } from '../core/common/logger.js';
import { failUndeliverable } from '../core/runs/stuck-jobs.js';
import { awsShell } from '../shells/aws.js';

/**
 * The dead-letter consumer Lambda, on the jobs queue's DLQ: a message lands there after every
 * delivery of its job failed (DELIVERY_ATTEMPTS), so the job is failed with that reason instead of
 * staying `queued` or `running` forever. A flow's step also has its task completed, so the flow
 * goes on at once (its next turn reads the failed step). A message it cannot read is logged and
 * left to SQS, so it stays in the DLQ, where the alarm on its depth sees it.
 */
export function createDeadLettersHandler(deliveryAttempts: () => number) {
  const failJob = async (record: SQSRecord): Promise<void> => {
    const { deps, flowRunner } = await awsShell();
    const message = decodeJobMessage(record.body);
    const failed = await failUndeliverable(deps, message.workspaceId, message.jobId, deliveryAttempts());
    log.warn('dead-lettered job', { job_id: message.jobId, workspace_id: message.workspaceId, failed_now: failed });
    if (message.taskToken) await flowRunner.completeTask(message.taskToken);
  };
  const failJobs = async (event: SQSEvent): Promise<SQSBatchResponse> => (await Promise.allSettled(event.Records.map(failJob))) as unknown as SQSBatchResponse;
  return middy<SQSEvent, SQSBatchResponse>(failJobs).use(
    sqsPartialBatchFailure({ logger: (reason, record) => log.error('dead letter not processed; it stays in the DLQ', { message_id: record.messageId, error: errorText(reason) }) }),
  );
}

export const handler = createDeadLettersHandler(() => Number(process.env.DELIVERY_ATTEMPTS || 3));
