import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { removalPolicyFor, type SvcConfig } from '../config.js';

export interface AlarmsProps {
  readonly config: SvcConfig;
  readonly deadLetterQueue: sqs.IQueue;
  /** Stream batches the job dispatcher gave up on. */
  readonly dispatchFailures: sqs.IQueue;
  /** Runs whenever a job lands in the DLQ (it fails the job, so the DLQ itself empties again). */
  readonly deadLetterConsumer: lambda.IFunction;
}

/**
 * What wakes an operator: a job in the dead-letter queue means a job failed every delivery and its
 * user is waiting on a status that will not come. Subscribe to the topic (stack output) to hear it.
 */
export class Alarms extends Construct {
  readonly topic: sns.Topic;
  readonly deadLettersAlarm: cloudwatch.Alarm;
  readonly undeliverableJobsAlarm: cloudwatch.Alarm;
  readonly dispatchFailuresAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);

    // A customer managed key, because CloudWatch must be allowed to use it in the key policy, and
    // the AWS managed aws/sns key's policy cannot be changed: alarms could not publish.
    const key = new kms.Key(this, 'TopicKey', {
      description: `svc ${props.config.stage}: encrypts the alarm topic`,
      enableKeyRotation: true,
      removalPolicy: removalPolicyFor(props.config.stage),
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowCloudWatchAlarmsToPublish',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'], // in a key policy "*" means this key
      }),
    );

    this.topic = new sns.Topic(this, 'Topic', {
      displayName: `svc ${props.config.stage} alarms`,
      masterKey: key,
      enforceSSL: true,
    });

    this.deadLettersAlarm = new cloudwatch.Alarm(this, 'DeadLetters', {
      alarmDescription: 'A job failed every delivery and was parked in the dead-letter queue; its status will not change by itself.',
      metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      // SQS stops publishing metrics for a queue idle for hours: an idle DLQ is the healthy state.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.deadLettersAlarm.addAlarmAction(new SnsAction(this.topic));

    // The consumer fails each dead-lettered job at once, so the DLQ's depth stays 0 while it works:
    // its runs are what tell that jobs exhausted their deliveries.
    this.undeliverableJobsAlarm = new cloudwatch.Alarm(this, 'UndeliverableJobs', {
      alarmDescription: 'Jobs failed every delivery to a worker and were failed (JobUndeliverable); see the dead-letters function logs for their ids.',
      metric: props.deadLetterConsumer.metricInvocations({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.undeliverableJobsAlarm.addAlarmAction(new SnsAction(this.topic));

    this.dispatchFailuresAlarm = new cloudwatch.Alarm(this, 'DispatchFailures', {
      alarmDescription: 'The job dispatcher could not send stored jobs to the queue or start their flows after its retries; they stay queued until the reaper fails them.',
      metric: props.dispatchFailures.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.dispatchFailuresAlarm.addAlarmAction(new SnsAction(this.topic));
  }
}
