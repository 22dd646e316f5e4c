import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { SvcConfig } from '../config.js';
import type { Data } from './data.js';
import { functionLogGroup, nodeFunction, serviceEnvironment, serviceRole } from './lambda-defaults.js';
import { acknowledgeWildcardResource, NODE_RUNTIME_PIN_REASON } from './nag.js';
import type { Secrets } from './secrets.js';

export interface SchedulesProps {
  readonly config: SvcConfig;
  readonly data: Data;
  readonly secrets: Secrets;
  readonly jobsQueue: sqs.IQueue;
}

/**
 * Schedules (README "Schedules"): each svc schedule is an EventBridge Scheduler schedule in this
 * group, created, changed and deleted by the api with the item, invoking the tick function in
 * each minute that may hold a tick; the tick function claims each tick in the table and stores
 * its job, which the table's stream then delivers like any other.
 */
export class Schedules extends Construct {
  readonly group: scheduler.ScheduleGroup;
  readonly handler: lambda.Function;
  /** The role Scheduler assumes to invoke the tick function; the api passes it to each schedule. */
  readonly invokeRole: iam.Role;

  constructor(scope: Construct, id: string, props: SchedulesProps) {
    super(scope, id);
    const { config, data, secrets } = props;

    this.group = new scheduler.ScheduleGroup(this, 'Group', {});

    const logGroup = functionLogGroup(this, 'TickLogs', config);
    const role = serviceRole(this, 'TickRole', logGroup, 'svc schedule ticks: claims a tick and stores its job');
    this.handler = nodeFunction(this, 'Tick', {
      entry: 'functions/handlers/schedule-tick.ts',
      description: 'svc schedule ticks: runs the ticks of the minute a schedule timer woke it for',
      role,
      logGroup,
      // One wake-up covers a minute of ticks (a schedule every second sleeps between them).
      timeout: Duration.seconds(90),
      memorySize: 512,
      // It sends nothing to the queue (the stream delivers the jobs it stores) and decrypts nothing.
      environment: serviceEnvironment(data, secrets, props.jobsQueue),
    });
    Validations.of(this.handler).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_PIN_REASON });
    data.grantTableReadWrite(role);
    // Large arguments of the jobs it stores may live in the bucket behind references.
    data.grantObjectReadWrite(role);
    secrets.signingKey.grantRead(role);

    this.invokeRole = new iam.Role(this, 'InvokeRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        // Only this account's schedules in this group may use it (the confused-deputy guard).
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account }, ArnLike: { 'aws:SourceArn': this.schedulesArn() } },
      }),
      description: 'svc schedules: EventBridge Scheduler invokes the schedule tick function',
    });
    this.handler.grantInvoke(this.invokeRole);
    acknowledgeWildcardResource(
      this.invokeRole,
      this.handler,
      ':*',
      "lambda.grantInvoke covers the function's versions and aliases (`:*`); Scheduler invokes the unqualified function only.",
    );
  }

  /** `schedule/<group>/*`: every schedule of the group, whatever svc item it stands for. */
  private schedulesArn(): string {
    return Stack.of(this).formatArn({ service: 'scheduler', resource: 'schedule', resourceName: `${this.group.scheduleGroupName}/*` });
  }

  /** Lets `fn` (the api) create, change and delete the group's schedules, passing only the invoke role. */
  grantManage(fn: lambda.Function): void {
    fn.addEnvironment('SCHEDULE_GROUP_NAME', this.group.scheduleGroupName);
    fn.addEnvironment('SCHEDULE_TARGET_ARN', this.handler.functionArn);
    fn.addEnvironment('SCHEDULER_ROLE_ARN', this.invokeRole.roleArn);
    const role = fn.role!;
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'ManageSchedules',
        actions: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule', 'scheduler:GetSchedule'],
        resources: [this.schedulesArn()],
      }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'PassSchedulerRole',
        actions: ['iam:PassRole'],
        resources: [this.invokeRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    Validations.of(role).acknowledge({
      // cdk-nag names the finding by the ARN pattern, the group's generated name included.
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${this.group.scheduleGroupName}/*]`,
      reason:
        "svc keeps one Scheduler schedule per svc schedule, named at run time: the grant covers this stack's schedule group only (schedule/<group>/*).",
    });
  }
}
