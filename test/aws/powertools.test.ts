import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { InProcessJobSignals } from '../../functions/adapters/in-process-job-signals.js';
import { MeteredJobSignals } from '../../functions/adapters/aws/metered-job-signals.js';
import { countApprovalWait, countHandOver, countJobFinished, powertoolsCoreLogger } from '../../functions/adapters/aws/powertools.js';

/**
 * What an operator reads in CloudWatch from the AWS shell's functions: the core's log lines as
 * Powertools JSON (the job and workspace as fields of their own, secrets masked), and a metric
 * per finished job by status in CloudWatch's embedded metric format.
 */

let lines: string[];
beforeEach(() => {
  lines = [];
  const capture = (chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
});
afterEach(() => vi.restoreAllMocks());

const json = () => lines.map((l) => JSON.parse(l) as Record<string, any>);

describe('the Powertools logger under the core logger', () => {
  it('writes one JSON line with the job, the workspace and the fields, every secret masked', () => {
    const log = powertoolsCoreLogger(new PowertoolsLogger({ serviceName: 'svc' })).child({ job_id: 'job-1', workspace_id: 'main' });
    log.warn('webhook delivery failed for Bearer abc.def', { token: 'svc_secret_token', url: 'https://x.example/hook?token=t0p', attempts: 3 });
    const [line] = json();
    expect(line).toMatchObject({ level: 'WARN', service: 'svc', job_id: 'job-1', workspace_id: 'main', attempts: 3, token: '[redacted]', url: 'https://x.example/hook?token=[redacted]' });
    expect(line.message).toBe('webhook delivery failed for Bearer [redacted]');
    expect(lines.join('\n')).not.toMatch(/svc_secret_token|t0p|abc\.def/);
  });
});

describe('jobs counted as they finish', () => {
  it('emits JobsFinished with the status once per stored completion, and nothing for a plain wake', () => {
    const metrics = new Metrics({ namespace: 'svc-test', serviceName: 'svc' });
    const signals = new MeteredJobSignals(new InProcessJobSignals({ holdProcess: false }), (status) => countJobFinished(status, metrics));
    signals.notify('job-1', { status: 'success', result: 1 });
    signals.notify('job-2');
    signals.notify('job-3', { status: 'failed', result: { error: { name: 'Error', message: 'no' } } });
    const emf = json().filter((l) => l._aws);
    expect(emf.map((l) => [l.status, l.JobsFinished])).toEqual([
      ['success', 1],
      ['failed', 1],
    ]);
    expect(emf[0]._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'svc-test', Metrics: [{ Name: 'JobsFinished', Unit: 'Count' }] });
    expect(emf[0]._aws.CloudWatchMetrics[0].Dimensions[0]).toEqual(expect.arrayContaining(['service', 'status']));
  });
});

describe('approval waits', () => {
  it('emits ApprovalWaits in the namespace the stack gives, with the service dimension the dashboard reads', () => {
    countApprovalWait(new Metrics({ namespace: 'svc-test', serviceName: 'svc' }));
    const [emf] = json().filter((l) => l._aws);
    expect(emf).toMatchObject({ ApprovalWaits: 1, service: 'svc' });
    expect(emf._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'svc-test', Dimensions: [['service']], Metrics: [{ Name: 'ApprovalWaits', Unit: 'Count' }] });
  });
});

describe('flow-runner hand-overs', () => {
  it('emits FlowHandOvers stamped with the invocation start, as Lambda stamps Errors, for the errors alarm to subtract', () => {
    const invokedAt = new Date(Date.now() - 240_000);
    countHandOver(invokedAt, new Metrics({ namespace: 'svc-test', serviceName: 'svc' }));
    const [emf] = json().filter((l) => l._aws);
    expect(emf).toMatchObject({ FlowHandOvers: 1, service: 'svc' });
    expect(emf._aws.Timestamp).toBe(invokedAt.getTime());
    expect(emf._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'svc-test', Dimensions: [['service']], Metrics: [{ Name: 'FlowHandOvers', Unit: 'Count' }] });
  });
});
