import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { dispatchableJob, JobDispatcher } from '../adapters/aws/job-outbox.js';
import { SqsJobQueue } from '../adapters/aws/sqs-job-queue.js';
import { errorText, log, useLogger } from '../core/common/logger.js';
import { powertoolsCoreLogger, tracer } from '../adapters/aws/powertools.js';

// The functions' one log format (Powertools JSON); this one needs none of shells/aws.ts besides.
useLogger(powertoolsCoreLogger());

/**
 * The job dispatcher Lambda, on the table's DynamoDB stream (the jobs outbox, see
 * adapters/aws/job-outbox.ts): each inserted queued job without a parent goes to the jobs queue, or
 * becomes its flow's execution. A record it cannot send is reported as the batch's failure, so
 * Lambda retries from it (records after it are sent again: harmless, the worker claims a job once
 * and an execution name is taken once) and, after the mapping's retries, keeps it in the
 * dead-letter queue as a failed batch. Separate from any other consumer of the stream.
 */
export function createJobDispatcherHandler(dispatcher: () => JobDispatcher) {
  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    const settled = await Promise.allSettled(event.Records.map(async (record) => dispatch(dispatcher(), record)));
    // Lambda resumes a stream batch from the lowest failed sequence number.
    const failed = event.Records.filter((_, i) => settled[i].status === 'rejected');
    for (const [i, record] of event.Records.entries()) {
      const outcome = settled[i];
      if (outcome.status === 'rejected') log.error('job dispatch failed; the stream will retry it', { sequence_number: record.dynamodb?.SequenceNumber, error: errorText(outcome.reason) });
    }
    const first = failed.map((r) => r.dynamodb?.SequenceNumber ?? '').sort(bySequence)[0];
    return { batchItemFailures: first === undefined ? [] : [{ itemIdentifier: first }] };
  };
}

async function dispatch(dispatcher: JobDispatcher, record: DynamoDBRecord): Promise<void> {
  const job = dispatchableJob(record);
  if (!job) return;
  await dispatcher.dispatch(job);
  log.info('job dispatched', { job_id: job.id, workspace_id: job.workspace_id, kind: job.kind });
}

/** Sequence numbers are decimal strings of varying length. */
function bySequence(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

let built: JobDispatcher | undefined;
function fromEnvironment(): JobDispatcher {
  const queueUrl = process.env.JOBS_QUEUE_URL;
  const stateMachineArn = process.env.STATE_MACHINE_ARN;
  if (!queueUrl || !stateMachineArn) throw new Error('JOBS_QUEUE_URL and STATE_MACHINE_ARN must be set');
  return (built ??= new JobDispatcher({ scripts: new SqsJobQueue({ client: tracer.captureAWSv3Client(new SQSClient({})), queueUrl }), sfn: tracer.captureAWSv3Client(new SFNClient({})), stateMachineArn }));
}

export const handler = createJobDispatcherHandler(fromEnvironment);
