import { Duration } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { SvcConfig } from '../config.js';

/** Where the functions' own metrics go (Powertools, functions/adapters/aws/powertools.ts): one namespace per stage. */
export function metricsNamespace(config: SvcConfig): string {
  return `svc-${config.stage}`;
}

/**
 * The flow runner's real failures: its Errors less its hand-overs. Advance hands its execution
 * over by throwing (statemachines/flow-runner.ts), each one counted as FlowHandOvers
 * (functions/adapters/aws/powertools.ts) and stamped, as Lambda stamps Errors, with the
 * invocation's start, so both land in the same period.
 */
export function flowRunnerFailures(flowRunner: lambda.IFunction, config: SvcConfig, period: Duration): cloudwatch.MathExpression {
  const sum = { statistic: cloudwatch.Stats.SUM, period };
  return new cloudwatch.MathExpression({
    expression: 'errors - FILL(handOvers, 0)',
    usingMetrics: {
      errors: flowRunner.metricErrors(sum),
      handOvers: new cloudwatch.Metric({ namespace: metricsNamespace(config), metricName: 'FlowHandOvers', dimensionsMap: { service: 'svc' }, ...sum }),
    },
    label: 'flow runner errors (hand-overs left out)',
    period,
  });
}

/** The metrics the functions emit, by the names functions/adapters/aws/powertools.ts gives them. */
const JOB_STATUSES = ['success', 'failed', 'canceled'] as const;

export interface DashboardProps {
  readonly config: SvcConfig;
  readonly restApi: apigw.RestApi;
  readonly jobsQueue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly stateMachine: sfn.IStateMachine;
  readonly worker: lambda.IFunction;
  /** One of the service functions, whose errors are read less its hand-overs (flowRunnerFailures). */
  readonly flowRunner: lambda.IFunction;
  readonly sandboxes: lambda.IFunction[];
  readonly serviceFunctions: lambda.IFunction[];
}

/**
 * The operator's one page (`svc-<stage>`): webhook traffic and latency, jobs by status, the queues,
 * approvals waiting, flows, and the functions' errors and throttles, the sandboxes' first.
 */
export class Dashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const period = Duration.minutes(1);
    const namespace = metricsNamespace(props.config);
    const own = (metricName: string, dimensionsMap: Record<string, string> = {}, label?: string) =>
      new cloudwatch.Metric({ namespace, metricName, dimensionsMap: { service: 'svc', ...dimensionsMap }, statistic: cloudwatch.Stats.SUM, period, label });
    const sum = { statistic: cloudwatch.Stats.SUM, period };

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `svc-${props.config.stage}`,
      defaultInterval: Duration.hours(3),
    });
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Requests (webhooks and API) and errors',
        left: [props.restApi.metricCount(sum)],
        right: [props.restApi.metricClientError(sum), props.restApi.metricServerError(sum)],
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Latency p50 / p99 (ms)',
        left: [props.restApi.metricLatency({ statistic: 'p50', period }), props.restApi.metricLatency({ statistic: 'p99', period })],
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Jobs finished, by status',
        left: JOB_STATUSES.map((status) => own('JobsFinished', { status }, status)),
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Queue: waiting, oldest (s), dead letters',
        left: [props.jobsQueue.metricApproximateNumberOfMessagesVisible({ period }), props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, label: 'dead letters' })],
        right: [props.jobsQueue.metricApproximateAgeOfOldestMessage({ period })],
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Approvals: flow turns left waiting for people (new waits and daily looks)',
        left: [own('ApprovalWaits', {}, 'approval waits')],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Flow executions',
        left: [props.stateMachine.metricStarted(sum), props.stateMachine.metricSucceeded(sum), props.stateMachine.metricFailed(sum)],
        right: [props.stateMachine.metricThrottled(sum)],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Sandbox errors and throttles',
        left: props.sandboxes.map((fn) => fn.metricErrors(sum)),
        right: props.sandboxes.map((fn) => fn.metricThrottles(sum)),
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Service functions: errors',
        left: props.serviceFunctions.map((fn) => (fn === props.flowRunner ? flowRunnerFailures(fn, props.config, period) : fn.metricErrors(sum))),
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Service functions: throttles, worker concurrency',
        left: props.serviceFunctions.map((fn) => fn.metricThrottles(sum)),
        right: [props.worker.metric('ConcurrentExecutions', { statistic: cloudwatch.Stats.MAXIMUM, period })],
        width: 12,
      }),
    );
  }
}
