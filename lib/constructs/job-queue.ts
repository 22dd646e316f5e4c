import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/**
 * Deliveries of one job before it is parked in the DLQ. Five, as AWS advises for a Lambda consumer
 * of a queue: a receive that ends throttled (the worker at its concurrency, a burst on the
 * account) counts as a delivery too, so a busy account would otherwise fail jobs as undeliverable
 * that no worker ever ran.
 */
export const MAX_RECEIVE_COUNT = 5;

export interface JobQueueProps {
  /** How long the consumer (the worker Lambda) may hold one message. */
  readonly consumerTimeout: Duration;
}

/**
 * The jobs queue: the api enqueues a job id, the worker consumes it. SQS delivers at least once, so
 * the worker's steps are idempotent (conditional writes on job state); a job that fails every
 * delivery lands in the DLQ, which the alarms watch.
 */
export class JobQueue extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  /** How long a received message stays hidden: a dead worker's job is delivered again after it. */
  readonly visibilityTimeout: Duration;

  constructor(scope: Construct, id: string, props: JobQueueProps) {
    super(scope, id);

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The longest SQS allows: time for someone to look before the evidence expires.
      retentionPeriod: Duration.days(14),
      // Longer than the dead-letter consumer (job-delivery.ts) may hold a message.
      visibilityTimeout: Duration.minutes(2),
    });

    this.queue = new sqs.Queue(this, 'Jobs', {
      // SSE-SQS: encrypted at rest without a KMS key policy to maintain or per-request KMS cost.
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Longer than the worker can hold a message, so a job is not handed to a second worker while
      // the first still runs it. Not the 6x Lambda suggests for throttled batches: a job reported
      // failed waits this long before its retry, and the worker's batches are small.
      visibilityTimeout: (this.visibilityTimeout = props.consumerTimeout.plus(Duration.minutes(1))),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });
  }
}
