import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { removalPolicyFor, type SvcConfig } from '../config.js';
import { flowRunnerFailures, metricsNamespace } from './dashboard.js';

export interface AlarmsProps {
  readonly config: SvcConfig;
  readonly deadLetterQueue: sqs.IQueue;
  /** Stream batches the job dispatcher gave up on. */
  readonly dispatchFailures: sqs.IQueue;
  /** Runs whenever a job lands in the DLQ (it fails the job, so the DLQ itself empties again). */
  readonly deadLetterConsumer: lambda.IFunction;
  readonly restApi: apigw.RestApi;
  readonly worker: lambda.IFunction;
  readonly flowRunner: lambda.IFunction;
  readonly stateMachine: sfn.IStateMachine;
  readonly sandboxes: lambda.IFunction[];
}

/**
 * What wakes an operator, all on one SNS topic (stack output `AlarmTopicArn`): a job in the
 * dead-letter queue (it failed every delivery and its user is waiting on a status that will not
 * come), jobs the dispatcher could not deliver, 5xx answers from the API (bad input gets a 4xx:
 * a 5xx is a defect or an outage), worker or flow-runner invocations that failed (SQS redelivers,
 * Step Functions retries: each is a job or flow delayed; the flow runner's hand-overs, errors by
 * design, left out), sandbox throttles (jobs waiting for
 * concurrency: raise the reservation or the account quota), flow executions that timed out, were
 * stopped or failed under their flow, and jobs the reaper had to fail.
 */
export class Alarms extends Construct {
  readonly topic: sns.Topic;
  readonly deadLettersAlarm: cloudwatch.Alarm;
  readonly undeliverableJobsAlarm: cloudwatch.Alarm;
  readonly dispatchFailuresAlarm: cloudwatch.Alarm;
  readonly apiServerErrorsAlarm: cloudwatch.Alarm;
  readonly workerErrorsAlarm: cloudwatch.Alarm;
  readonly flowRunnerErrorsAlarm: cloudwatch.Alarm;
  readonly sandboxThrottlesAlarm: cloudwatch.Alarm;
  readonly flowExecutionsTimedOutAlarm: cloudwatch.Alarm;
  readonly flowExecutionsAbortedAlarm: cloudwatch.Alarm;
  readonly strandedFlowsAlarm: cloudwatch.Alarm;
  readonly reapedJobsAlarm: cloudwatch.Alarm;

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

    const fiveMinuteSum = { period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM };
    const anyIn = (alarmId: string, alarmDescription: string, metric: cloudwatch.IMetric) => {
      const alarm = new cloudwatch.Alarm(this, alarmId, {
        alarmDescription,
        metric,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      alarm.addAlarmAction(new SnsAction(this.topic));
      return alarm;
    };
    this.apiServerErrorsAlarm = anyIn(
      'ApiServerErrors',
      'The API answered 5xx: a defect or an outage (bad input gets a 4xx). See the api function logs and its X-Ray traces.',
      props.restApi.metricServerError(fiveMinuteSum),
    );
    this.workerErrorsAlarm = anyIn(
      'WorkerErrors',
      'Worker invocations failed as a whole (not a job failing: the function itself); SQS redelivers the batch. See the worker logs.',
      props.worker.metricErrors(fiveMinuteSum),
    );
    this.flowRunnerErrorsAlarm = anyIn(
      'FlowRunnerErrors',
      'The flow runner failed a turn; Step Functions retries it, and after its retries the flow fails with FlowRunnerError. See its logs and the execution.',
      // Not its Errors alone: every turn that does not end the flow is thrown as a hand-over.
      flowRunnerFailures(props.flowRunner, props.config, Duration.minutes(5)),
    );
    this.sandboxThrottlesAlarm = anyIn(
      'SandboxThrottles',
      'Sandbox invocations were throttled: jobs wait for concurrency. Raise sandboxReservedConcurrency or the account quota.',
      new cloudwatch.MathExpression({
        expression: props.sandboxes.map((_, i) => `t${i}`).join(' + '),
        usingMetrics: Object.fromEntries(props.sandboxes.map((fn, i) => [`t${i}`, fn.metricThrottles(fiveMinuteSum)])),
        label: 'sandbox throttles',
        period: Duration.minutes(5),
      }),
    );

    this.flowExecutionsTimedOutAlarm = anyIn(
      'FlowExecutionsTimedOut',
      "A flow's Step Functions execution reached its time limit; the reaper failed its job (FlowExecutionTimedOut). See the execution in the Step Functions console.",
      props.stateMachine.metricTimedOut(fiveMinuteSum),
    );
    // svc never stops an execution itself (a canceled flow ends in its Fail state): a stop is a person or a parent's stop.
    this.flowExecutionsAbortedAlarm = anyIn(
      'FlowExecutionsAborted',
      "A flow's Step Functions execution was stopped; the reaper failed its job (FlowExecutionAborted). See who stopped it in CloudTrail.",
      props.stateMachine.metricAborted(fiveMinuteSum),
    );
    // Not ExecutionsFailed: a flow that fails (a step's error) ends its execution failed too. This
    // counts the executions that failed, timed out or were stopped with their job still running.
    const own = (metricName: string) => new cloudwatch.Metric({ namespace: metricsNamespace(props.config), metricName, dimensionsMap: { service: 'svc' }, ...fiveMinuteSum });
    this.strandedFlowsAlarm = anyIn(
      'StrandedFlows',
      "Flow executions ended under running flow jobs (failed with nothing to catch it, timed out or stopped); the reaper failed the jobs (FlowExecutionFailed, -TimedOut, -Aborted). See the reaper's logs for the job ids and the executions.",
      own('StrandedFlows'),
    );
    this.reapedJobsAlarm = anyIn(
      'ReapedJobs',
      "The reaper failed jobs stuck queued (JobNeverStarted) or running (JobWorkerLost). See the reaper's logs ('stuck job failed') for their ids.",
      own('ReapedJobs'),
    );
  }
}
