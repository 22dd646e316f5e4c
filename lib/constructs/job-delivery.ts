import { Duration, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DISPATCH_FILTERS } from '../../functions/adapters/aws/job-outbox.js';
import type { SvcConfig } from '../config.js';
import type { Data } from './data.js';
import type { FlowRunner } from './flow-runner.js';
import type { JobQueue } from './job-queue.js';
import { MAX_RECEIVE_COUNT } from './job-queue.js';
import { functionLogGroup, nodeFunction, serviceEnvironment, serviceRole } from './lambda-defaults.js';
import { NODE_RUNTIME_PIN_REASON } from './nag.js';
import { executionStatusPattern } from './execution-status-rule.js';
import type { Secrets } from './secrets.js';

export interface JobDeliveryProps {
  readonly config: SvcConfig;
  readonly data: Data;
  readonly secrets: Secrets;
  readonly jobQueue: JobQueue;
  readonly flowRunner: FlowRunner;
}

/** How often the reaper looks for stuck jobs. */
export const REAPER_RATE = Duration.minutes(5);
/** Stream batches retried this often (halved each time) before the batch is parked as a failure. */
const DISPATCH_RETRY_ATTEMPTS = 10;
/** Past the job timeout and the queue's redelivery, before the reaper calls a worker lost. */
const REAP_RUNNING_MARGIN_SECONDS = 300;

/**
 * Getting every accepted job to a worker, and every stuck one to an end (README "No lost or stuck
 * job"):
 *
 * - dispatcher: the table's stream -> jobs queue / flow executions. The api only inserts the job;
 *   the stream delivers each committed insert at least once, so no crash strands a job between
 *   two writes. Batches it cannot send are retried, then recorded in `dispatchFailures`.
 * - dead-letter consumer: a job whose every delivery failed is failed with that reason.
 * - reaper: every 5 minutes, jobs queued or running far past their deadlines are failed, and
 *   running flow jobs whose execution ended are ended (a reconcile with DescribeExecution); at
 *   once, through `executionStatusRule`, when a flow's execution fails, times out or is stopped.
 */
export class JobDelivery extends Construct {
  readonly dispatcher: lambda.Function;
  readonly deadLetters: lambda.Function;
  readonly reaper: lambda.Function;
  /** Stream batches the dispatcher gave up on (their jobs stay queued until the reaper fails them). */
  readonly dispatchFailures: sqs.Queue;
  readonly reaperSchedule: events.Rule;
  /** Flow executions that ended badly (FAILED, TIMED_OUT, ABORTED) -> the reaper, which ends their jobs. */
  readonly executionStatusRule: events.Rule;

  constructor(scope: Construct, id: string, props: JobDeliveryProps) {
    super(scope, id);
    const { config, data, secrets, jobQueue, flowRunner } = props;

    this.dispatchFailures = new sqs.Queue(this, 'DispatchFailures', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.dispatchFailures).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself a failure destination (of the dispatcher stream mapping); nothing consumes it, an alarm watches its depth.',
    });

    const dispatcherLogs = functionLogGroup(this, 'DispatcherLogs', config);
    const dispatcherRole = serviceRole(this, 'DispatcherRole', dispatcherLogs, 'svc job dispatcher: sends stored jobs to the jobs queue or starts their flows');
    this.dispatcher = nodeFunction(this, 'Dispatcher', {
      entry: 'functions/handlers/job-dispatcher.ts',
      description: 'svc job dispatcher: table stream -> jobs queue and flow executions (the jobs outbox)',
      role: dispatcherRole,
      logGroup: dispatcherLogs,
      timeout: Duration.seconds(30),
      memorySize: 256,
      environment: { JOBS_QUEUE_URL: jobQueue.queue.queueUrl, STATE_MACHINE_ARN: flowRunner.stateMachineArn },
    });
    this.dispatcher.addEventSource(
      new DynamoEventSource(data.table, {
        // From the oldest record kept: a deploy never skips jobs inserted while the mapping was created.
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 25,
        maxBatchingWindow: Duration.seconds(0),
        bisectBatchOnError: true,
        retryAttempts: DISPATCH_RETRY_ATTEMPTS,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.dispatchFailures),
        // Only inserted top-level queued jobs (and held ones let go) wake the function; other writes cost nothing.
        filters: DISPATCH_FILTERS.map((f) => ({ pattern: JSON.stringify(f) })),
      }),
    );
    jobQueue.queue.grantSendMessages(dispatcherRole);
    dispatcherRole.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'StartFlows', actions: ['states:StartExecution'], resources: [flowRunner.stateMachineArn] }));

    const deadLetterLogs = functionLogGroup(this, 'DeadLettersLogs', config);
    const deadLetterRole = serviceRole(this, 'DeadLettersRole', deadLetterLogs, 'svc dead letters: fails jobs whose every delivery failed');
    this.deadLetters = nodeFunction(this, 'DeadLetters', {
      entry: 'functions/handlers/dead-letters.ts',
      description: 'svc dead letters: marks jobs parked in the dead-letter queue failed, with the reason',
      role: deadLetterRole,
      logGroup: deadLetterLogs,
      timeout: Duration.seconds(60),
      memorySize: 512,
      environment: { ...serviceEnvironment(data, secrets, jobQueue.queue), DELIVERY_ATTEMPTS: String(MAX_RECEIVE_COUNT) },
    });
    this.deadLetters.addEventSource(new SqsEventSource(jobQueue.deadLetterQueue, { batchSize: 10, reportBatchItemFailures: true }));

    const reaperLogs = functionLogGroup(this, 'ReaperLogs', config);
    const reaperRole = serviceRole(this, 'ReaperRole', reaperLogs, 'svc reaper: fails jobs queued or running past their deadlines');
    const visibilitySeconds = jobQueue.visibilityTimeout.toSeconds();
    this.reaper = nodeFunction(this, 'Reaper', {
      entry: 'functions/handlers/reaper.ts',
      description: 'svc reaper: fails jobs queued or running far past their deadlines',
      role: reaperRole,
      logGroup: reaperLogs,
      timeout: Duration.minutes(2),
      memorySize: 512,
      environment: {
        ...serviceEnvironment(data, secrets, jobQueue.queue),
        REAP_QUEUED_AFTER_SECONDS: String(config.queuedDeadlineSeconds),
        // A dead worker's job is taken again after the visibility timeout; only if none did is it lost.
        REAP_RUNNING_AFTER_SECONDS: String(config.jobTimeoutSeconds + visibilitySeconds + REAP_RUNNING_MARGIN_SECONDS),
        STATE_MACHINE_ARN: flowRunner.stateMachineArn,
      },
    });
    this.reaperSchedule = new events.Rule(this, 'ReaperSchedule', {
      description: 'svc: fail stuck jobs',
      schedule: events.Schedule.rate(REAPER_RATE),
      targets: [new targets.LambdaFunction(this.reaper, { retryAttempts: 2 })],
    });
    // EventBridge retries a failed delivery for up to a day; past that the reconcile above still ends the job.
    this.executionStatusRule = new events.Rule(this, 'FlowExecutionEnded', {
      description: 'svc: a flow execution failed, timed out or was stopped; end its job and wake its waiters',
      eventPattern: cdkPattern(executionStatusPattern(flowRunner.stateMachineArn)),
      targets: [new targets.LambdaFunction(this.reaper, { retryAttempts: 10, maxEventAge: Duration.hours(24) })],
    });
    reaperRole.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'DescribeFlowExecutions', actions: ['states:DescribeExecution'], resources: [flowRunner.executionsArn] }));
    Validations.of(reaperRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:svc-${config.stage}-flow-runner:*]`,
      reason: "The reconcile describes each running flow job's executions, named after the flow path and job id at run time: the grant covers the executions of the flow-runner state machine only, and only DescribeExecution.",
    });

    for (const [fn, role] of [[this.deadLetters, deadLetterRole], [this.reaper, reaperRole]] as const) {
      data.grantTableReadWrite(role);
      // Logs and results of large jobs live in the bucket; failing a job keeps its logs.
      data.grantObjectReadWrite(role);
      secrets.signingKey.grantRead(role);
      // A failed step lets its flow go on at once.
      role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'WakeFlows', actions: ['states:SendTaskSuccess'], resources: [flowRunner.stateMachineArn] }));
      Validations.of(fn).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_PIN_REASON });
    }
    Validations.of(this.dispatcher).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_PIN_REASON });
    Validations.of(dispatcherRole).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Added by the DynamoDB event source: dynamodb:ListStreams supports no resource-level permissions; reading records is granted on this table stream only.',
    });
  }
}

/** EventBridge's JSON pattern in CDK's spelling (`detailType` for `detail-type`). */
function cdkPattern(pattern: ReturnType<typeof executionStatusPattern>): events.EventPattern {
  return { source: pattern.source, detailType: pattern['detail-type'], detail: pattern.detail };
}
