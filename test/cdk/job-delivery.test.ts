import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { DISPATCH_FILTER, DISPATCH_FILTERS } from '../../functions/adapters/aws/job-outbox.js';
import type { SvcStack } from '../../lib/svc-stack.js';
import { arnOf, buildSvcApp, logicalId } from './svc-app.js';

/** No job lost or stuck, as deployed: the stream outbox, the dead-letter consumer and the reaper. */

type Resource = { Type: string; Properties: Record<string, any> };
let stack: SvcStack;
let template: Template;

beforeAll(() => {
  stack = buildSvcApp({ bundle: false }).stack;
  template = Template.fromStack(stack);
});

const propsOf = (construct: Parameters<typeof logicalId>[0]) => (template.toJSON().Resources[logicalId(construct)] as Resource).Properties;
const statementsOf = (role: Parameters<typeof logicalId>[0]) =>
  (Object.values(template.findResources('AWS::IAM::Policy')) as Resource[])
    .filter((p) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === logicalId(role)))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>);
const actionsOf = (role: Parameters<typeof logicalId>[0]) => statementsOf(role).flatMap((s) => [s.Action].flat() as string[]);

describe('the jobs outbox', () => {
  it("feeds the dispatcher from the table's stream, only inserted top-level queued jobs, from the oldest record, retried then parked", () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(stack.jobDelivery.dispatcher) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.data.table), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FilterCriteria: { Filters: DISPATCH_FILTERS.map((f) => ({ Pattern: JSON.stringify(f) })) },
      DestinationConfig: { OnFailure: { Destination: arnOf(stack.jobDelivery.dispatchFailures) } },
    });
    expect(DISPATCH_FILTER).toEqual({ eventName: ['INSERT'], dynamodb: { NewImage: { entity: { S: ['job'] }, status: { S: ['queued'] }, parent_job: { NULL: [true] } } } });
  });

  it('lets the dispatcher send to the jobs queue and start flows, and the api neither: a stored job is its enqueue', () => {
    const dispatcher = actionsOf(stack.jobDelivery.dispatcher.role!);
    expect(dispatcher).toEqual(expect.arrayContaining(['sqs:SendMessage', 'states:StartExecution']));
    expect(dispatcher.some((a) => a.startsWith('dynamodb:Put') || a.startsWith('dynamodb:Update') || a.startsWith('secretsmanager:'))).toBe(false);
    const api = actionsOf(stack.api.handler.role!);
    expect(api).not.toContain('sqs:SendMessage');
    expect(api).not.toContain('states:StartExecution');
    expect(propsOf(stack.jobDelivery.dispatcher).Environment.Variables).toEqual({ NODE_OPTIONS: '--enable-source-maps', JOBS_QUEUE_URL: { Ref: logicalId(stack.jobQueue.queue) }, STATE_MACHINE_ARN: expect.anything() });
  });

  it('parks failed stream batches in an encrypted queue an alarm watches', () => {
    expect(propsOf(stack.jobDelivery.dispatchFailures).SqsManagedSseEnabled).toBe(true);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack.jobDelivery.dispatchFailures), 'QueueName'] } }],
      AlarmActions: [{ Ref: logicalId(stack.alarms.topic) }],
    });
  });
});

describe('the dead-letter consumer', () => {
  it("consumes the jobs queue's DLQ with partial batch failures, knowing how many deliveries a job got", () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(stack.jobDelivery.deadLetters) },
      EventSourceArn: arnOf(stack.jobQueue.deadLetterQueue),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(propsOf(stack.jobDelivery.deadLetters).Environment.Variables).toMatchObject({ DELIVERY_ATTEMPTS: '5', TABLE_NAME: { Ref: logicalId(stack.data.table) } });
    expect(actionsOf(stack.jobDelivery.deadLetters.role!)).toEqual(expect.arrayContaining(['states:SendTaskSuccess', 'sqs:ReceiveMessage', 'sqs:DeleteMessage']));
  });

  it('alarms the operators whenever it runs: each run means jobs failed every delivery', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Invocations',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(stack.jobDelivery.deadLetters) } }],
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      AlarmActions: [{ Ref: logicalId(stack.alarms.topic) }],
    });
  });
});

describe('the reaper', () => {
  it('runs every 5 minutes with deadlines from the settings: queued 6 h; running past job timeout + redelivery + 5 min', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [Match.objectLike({ Arn: arnOf(stack.jobDelivery.reaper) })],
    });
    // 840 s job timeout + 960 s visibility timeout (the worker's 900 s + 60 s) + 300 s.
    expect(propsOf(stack.jobDelivery.reaper).Environment.Variables).toMatchObject({ REAP_QUEUED_AFTER_SECONDS: '21600', REAP_RUNNING_AFTER_SECONDS: '2100' });
    const custom = Template.fromStack(buildSvcApp({ bundle: false, props: { queuedDeadlineSeconds: 7200, jobTimeoutSeconds: 300 } }).stack);
    custom.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ REAP_QUEUED_AFTER_SECONDS: '7200', REAP_RUNNING_AFTER_SECONDS: '1560' }) } });
    expect(() => buildSvcApp({ bundle: false, props: { queuedDeadlineSeconds: 600 } })).toThrow(/queuedDeadlineSeconds/);
    // Longer than the queue keeps delivering a job: 5 receives, each up to 960 s apart.
    expect(() => buildSvcApp({ bundle: false, props: { queuedDeadlineSeconds: 4799 } })).toThrow(/at least 4800 \(the jobs queue delivers a job 5 times/);
  });
});

describe('flow executions that end without their job', () => {
  it('reach the reaper through a rule on failed, timed-out and aborted executions of the flow runner, which may describe its executions', () => {
    const stateMachineArn = stack.resolve(stack.flowRunner.stateMachineArn);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.states'],
        'detail-type': ['Step Functions Execution Status Change'],
        detail: { status: ['FAILED', 'TIMED_OUT', 'ABORTED'], stateMachineArn: [stateMachineArn] },
      },
      Targets: [Match.objectLike({ Arn: arnOf(stack.jobDelivery.reaper), RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 86_400 } })],
    });
    expect(statementsOf(stack.jobDelivery.reaper.role!)).toContainEqual(
      expect.objectContaining({ Action: 'states:DescribeExecution', Resource: stack.resolve(stack.flowRunner.executionsArn) }),
    );
    expect(propsOf(stack.jobDelivery.reaper).Environment.Variables.STATE_MACHINE_ARN).toEqual(stateMachineArn);
  });
});
