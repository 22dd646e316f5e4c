import { Duration, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { SvcConfig } from '../config.js';
import type { Data } from './data.js';
import type { FlowRunner } from './flow-runner.js';
import { functionLogGroup, nodeFunction, serviceEnvironment, serviceRole } from './lambda-defaults.js';
import { NODE_RUNTIME_PIN_REASON } from './nag.js';
import { grantSendNotices, noticeEnvironment } from './notices.js';
import type { Secrets } from './secrets.js';

export interface MaintenanceProps {
  readonly config: SvcConfig;
  readonly data: Data;
  readonly secrets: Secrets;
  readonly jobsQueue: sqs.IQueue;
  /** Flows at a ConsentGate whose notices a crashed turn left unsent are woken from here. */
  readonly flowRunner: FlowRunner;
}

/** How often expired tokens are deleted and expiry notices sent; the local shell's default too. */
export const SWEEP_RATE = Duration.hours(1);

/**
 * The instance's housekeeping on an EventBridge schedule (docs/spec.md 5: token expiry): deletes expired
 * tokens and tells their owners, 7 days ahead and once deleted (spec 3, 5.8), by SES when a
 * verified sender is configured (`notificationSender`), else into the outbox the API lists.
 */
export class Maintenance extends Construct {
  readonly handler: lambda.Function;
  readonly schedule: events.Rule;

  constructor(scope: Construct, id: string, props: MaintenanceProps) {
    super(scope, id);
    const { config, data, secrets } = props;

    const logGroup = functionLogGroup(this, 'HandlerLogs', config);
    const role = serviceRole(this, 'HandlerRole', logGroup, 'svc maintenance: token expiry sweep and notices');
    this.handler = nodeFunction(this, 'Handler', {
      entry: 'functions/handlers/maintenance.ts',
      description: 'svc maintenance: deletes expired tokens and sends expiry notices',
      role,
      logGroup,
      timeout: Duration.minutes(5),
      memorySize: 512,
      environment: {
        // It sends nothing to the queue and decrypts nothing: no grants on either.
        ...serviceEnvironment(data, secrets, props.jobsQueue),
        ...noticeEnvironment(config),
      },
    });
    Validations.of(this.handler).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_PIN_REASON });
    data.grantTableReadWrite(role);
    // Large entities (the outbox's notices) may live in the bucket behind references.
    data.grantObjectReadWrite(role);
    secrets.signingKey.grantRead(role);
    grantSendNotices(this, role, config);
    // Waking a flow completes its parked wait task; its next Advance sends the pending notices.
    role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'WakeFlowsWithUnsentNotices', actions: ['states:SendTaskSuccess'], resources: [props.flowRunner.stateMachineArn] }));

    this.schedule = new events.Rule(this, 'Schedule', {
      description: 'svc: token expiry sweep',
      schedule: events.Schedule.rate(SWEEP_RATE),
      targets: [new targets.LambdaFunction(this.handler, { retryAttempts: 2 })],
    });
  }
}
