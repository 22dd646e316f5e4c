import { Duration, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { SvcConfig } from '../config.js';
import type { Data } from './data.js';
import { EVENTS_STREAM_FILTERS } from './events-filter.js';
import { functionLogGroup, nodeFunction, serviceEnvironment, serviceRole } from './lambda-defaults.js';
import { NODE_RUNTIME_PIN_REASON } from './nag.js';
import type { Secrets } from './secrets.js';

export interface EventsProps {
  readonly config: SvcConfig;
  readonly data: Data;
  readonly secrets: Secrets;
  readonly jobsQueue: sqs.IQueue;
}

/** How often the events function looks for retries that came due; its stream starts it for new events. */
export const RETRY_SWEEP_RATE = Duration.minutes(1);

/**
 * Workspace and instance webhook events (spec 6): the api records each event in the same
 * transaction as its change (an outbox item in the table); the table's stream, filtered to those
 * items, starts the events function, which sends them signed through the SSRF-guarded client and
 * records every attempt on the item. Retries: within an invocation while they are near, else on
 * the one-minute schedule. Webhook receivers are on the internet: the function needs no VPC, and
 * it holds no grant beyond the table, the signing key and opening the webhook secrets.
 */
export class Events extends Construct {
  readonly handler: lambda.Function;
  readonly schedule: events.Rule;

  constructor(scope: Construct, id: string, props: EventsProps) {
    super(scope, id);
    const { config, data, secrets } = props;

    const logGroup = functionLogGroup(this, 'HandlerLogs', config);
    const role = serviceRole(this, 'HandlerRole', logGroup, 'svc events: webhook deliveries');
    this.handler = nodeFunction(this, 'Handler', {
      entry: 'functions/handlers/events.ts',
      description: 'svc events: delivers workspace and instance webhook events from the outbox',
      role,
      logGroup,
      // One invocation stays up to a minute for near retries, plus an attempt's timeout and a margin.
      timeout: Duration.minutes(2),
      memorySize: 512,
      environment: serviceEnvironment(data, secrets, props.jobsQueue),
    });
    Validations.of(this.handler).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_PIN_REASON });
    data.grantTableReadWrite(role);
    secrets.signingKey.grantRead(role);
    // Webhook secrets are sealed like secret variables: opening them needs the same key.
    secrets.grantSecretVariables(role);

    this.handler.addEventSource(
      new DynamoEventSource(data.table, {
        startingPosition: lambda.StartingPosition.LATEST,
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(1),
        // The records only wake the function (it reads the outbox items): a failed batch need not block the shard long.
        retryAttempts: 2,
        filters: EVENTS_STREAM_FILTERS.map((pattern) => lambda.FilterCriteria.filter(pattern)),
      }),
    );
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: "dynamodb:ListStreams, which the stream's event source mapping needs, takes no resource narrower than *; every other stream action is granted on this table's stream alone.",
    });

    this.schedule = new events.Rule(this, 'Schedule', {
      description: 'svc: webhook retries that came due',
      schedule: events.Schedule.rate(RETRY_SWEEP_RATE),
      targets: [new targets.LambdaFunction(this.handler, { retryAttempts: 2 })],
    });
  }
}
