import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SvcStack } from '../../lib/svc-stack.js';
import { METRIC, METRICS_NAMESPACE_ENV } from '../../functions/adapters/aws/powertools.js';
import { buildSvcApp, logicalId } from './svc-app.js';

/**
 * What an operator of a deployed stack looks at: one dashboard, alarms that all reach one SNS
 * topic, X-Ray traces from the API through the functions and the state machine, and the
 * functions' own metrics in the stage's namespace.
 */

type Resource = { Type: string; Properties: Record<string, any> };

let stack: SvcStack;
let template: Template;
let resources: Record<string, Resource>;
beforeAll(() => {
  ({ stack } = buildSvcApp({ bundle: false, props: { stage: 'prod' } }));
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources;
});

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

describe('the dashboard', () => {
  it('is one dashboard per stage showing webhook rate and latency, jobs by status, dead letters, approvals, sandbox errors and throttles', () => {
    const [[, dashboard], ...more] = ofType('AWS::CloudWatch::Dashboard');
    expect(more).toHaveLength(0);
    expect(dashboard.Properties.DashboardName).toBe('svc-prod');
    const body = JSON.stringify(stack.resolve(dashboard.Properties.DashboardBody));
    for (const title of ['Requests (webhooks and API) and errors', 'Latency p50 / p99 (ms)', 'Jobs finished, by status', 'Queue: waiting, oldest (s), dead letters', 'Approvals: flow turns left waiting for people (new waits and daily looks)', 'Sandbox errors and throttles']) {
      expect(body).toContain(title);
    }
    expect(body).toMatch(/AWS\/ApiGateway.*Latency.*p99/);
    // The functions' own metrics, by the names they publish them under.
    expect(body).toContain(`svc-prod\\",\\"${METRIC.jobsFinished}\\",\\"service\\",\\"svc\\",\\"status\\",\\"failed`);
    expect(body).toContain(METRIC.approvalWaits);
    expect(body).toMatch(/ApproximateNumberOfMessagesVisible/);
    expect(body).toMatch(/AWS\/Lambda.*Throttles/);
    // The flow runner's errors less its hand-overs, as its alarm reads them.
    expect(body).toContain('errors - FILL(handOvers, 0)');
    expect(body).toContain(METRIC.flowHandOvers);
  });

  it('reads the namespace every service function publishes its metrics to', () => {
    for (const fn of [stack.api.handler, stack.worker.handler, stack.flowRunner.handler, stack.jobDelivery.reaper]) {
      expect(resources[logicalId(fn)].Properties.Environment.Variables[METRICS_NAMESPACE_ENV]).toBe('svc-prod');
    }
    // The sandboxes hold nothing of ours, not even that.
    expect(resources[logicalId(stack.sandboxes.nodeSandbox)].Properties.Environment?.Variables?.[METRICS_NAMESPACE_ENV]).toBeUndefined();
  });
});

describe('the alarms', () => {
  it('all go to the operator topic, which the stack outputs', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThanOrEqual(11);
    for (const [, alarm] of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: logicalId(stack.alarms.topic) }]);
    expect(template.toJSON().Outputs.AlarmTopicArn.Value).toEqual({ Ref: logicalId(stack.alarms.topic) });
  });

  it('watch API 5xx, worker and flow-runner errors and sandbox throttles, besides dead letters and undelivered jobs', () => {
    const alarm = (a: { node: { defaultChild?: unknown } }) => resources[logicalId(a as never)].Properties;
    expect(alarm(stack.alarms.apiServerErrorsAlarm)).toMatchObject({ Namespace: 'AWS/ApiGateway', MetricName: '5XXError', Threshold: 0 });
    expect(alarm(stack.alarms.workerErrorsAlarm)).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Errors', Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(stack.worker.handler) } }] });
    // The flow runner's errors less its hand-overs (an Advance that does not end its flow throws one by design).
    const runner = alarm(stack.alarms.flowRunnerErrorsAlarm);
    expect(runner).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
    const terms = runner.Metrics as Array<Record<string, any>>;
    expect(terms.find((m) => m.ReturnData !== false)).toMatchObject({ Expression: 'errors - FILL(handOvers, 0)' });
    expect(terms.find((m) => m.Id === 'errors')?.MetricStat).toMatchObject({ Metric: { Namespace: 'AWS/Lambda', MetricName: 'Errors', Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(stack.flowRunner.handler) } }] }, Stat: 'Sum', Period: 300 });
    expect(terms.find((m) => m.Id === 'handOvers')?.MetricStat).toMatchObject({ Metric: { Namespace: 'svc-prod', MetricName: METRIC.flowHandOvers, Dimensions: [{ Name: 'service', Value: 'svc' }] }, Stat: 'Sum', Period: 300 });
    const throttles = alarm(stack.alarms.sandboxThrottlesAlarm).Metrics as Array<Record<string, any>>;
    expect(throttles.find((m) => m.Expression)).toMatchObject({ Expression: 't0 + t1' });
    expect(throttles.filter((m) => m.MetricStat?.Metric.MetricName === 'Throttles')).toHaveLength(2);
  });

  it('watch flow executions that timed out or were stopped, flows stranded under their execution and jobs the reaper failed', () => {
    const alarm = (a: { node: { defaultChild?: unknown } }) => resources[logicalId(a as never)].Properties;
    const stateMachine = [{ Name: 'StateMachineArn', Value: { Ref: logicalId(stack.flowRunner.stateMachine) } }];
    expect(alarm(stack.alarms.flowExecutionsTimedOutAlarm)).toMatchObject({ Namespace: 'AWS/States', MetricName: 'ExecutionsTimedOut', Dimensions: stateMachine, Threshold: 0, Statistic: 'Sum' });
    expect(alarm(stack.alarms.flowExecutionsAbortedAlarm)).toMatchObject({ Namespace: 'AWS/States', MetricName: 'ExecutionsAborted', Dimensions: stateMachine, Threshold: 0 });
    // Failed executions by the reaper's count: a flow failing by its own steps ends its execution failed too.
    const own = [{ Name: 'service', Value: 'svc' }];
    expect(alarm(stack.alarms.strandedFlowsAlarm)).toMatchObject({ Namespace: 'svc-prod', MetricName: METRIC.strandedFlows, Dimensions: own, Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    expect(alarm(stack.alarms.reapedJobsAlarm)).toMatchObject({ Namespace: 'svc-prod', MetricName: METRIC.reapedJobs, Dimensions: own, Threshold: 0 });
    for (const a of [stack.alarms.flowExecutionsTimedOutAlarm, stack.alarms.flowExecutionsAbortedAlarm, stack.alarms.strandedFlowsAlarm, stack.alarms.reapedJobsAlarm]) {
      expect(alarm(a).TreatMissingData).toBe('notBreaching');
    }
  });
});

describe('traces', () => {
  it('are active on every service function, the API stage and the state machine; the sandboxes, which hold no permissions, stay out', () => {
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      const sandbox = [logicalId(stack.sandboxes.nodeSandbox), logicalId(stack.sandboxes.pythonSandbox)].some((id) => resources[id] === fn);
      if (sandbox) expect(fn.Properties.TracingConfig?.Mode ?? 'PassThrough', fn.Properties.Description).not.toBe('Active');
      else if (fn.Properties.Description?.startsWith('svc')) expect(fn.Properties.TracingConfig, fn.Properties.Description).toEqual({ Mode: 'Active' });
    }
    const [[, apiStage]] = ofType('AWS::ApiGateway::Stage');
    expect(apiStage.Properties.TracingEnabled).toBe(true);
    expect(resources[logicalId(stack.flowRunner.stateMachine)].Properties.TracingConfiguration).toEqual({ Enabled: true });
  });
});
