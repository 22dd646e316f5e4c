import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { redact, type LogFields, type Logger, type LogLevel } from '../../core/common/logger.js';

/**
 * Powertools for AWS Lambda in the AWS shell: the core's log lines written by the Powertools
 * logger (JSON with the service name and the X-Ray trace id, the core's fields - job id,
 * workspace - at the top level, every secret masked by the core's own `redact` first), the
 * service's metrics as CloudWatch embedded metrics, and the SDK clients traced in X-Ray.
 * One instance of each per execution environment, as Powertools intends.
 */

/** Where the service's own metrics go; the stack sets it per stage and its dashboard reads it. */
export const METRICS_NAMESPACE_ENV = 'POWERTOOLS_METRICS_NAMESPACE';
const SERVICE = 'svc';

export const powertoolsLogger = new PowertoolsLogger({ serviceName: SERVICE });
export const metrics = new Metrics({ namespace: process.env[METRICS_NAMESPACE_ENV] || SERVICE, serviceName: SERVICE });
/** What the shell asks of a tracer: an SDK client whose calls are X-Ray subsegments. */
export interface ClientTracer {
  captureAWSv3Client<T>(client: T): T;
}

/**
 * Powertools' tracer in Lambda (AWS_LAMBDA_FUNCTION_NAME set); outside it (the AWS shell's tests) a
 * tracer that hands each client back as is, which is all Powertools' own does there. Not even
 * loaded there: the X-Ray SDK under it turns on, when imported, async hooks that track every
 * promise of the process, traced or not (a tenth of the AWS shell's CPU in its tests).
 */
export const tracer: ClientTracer = process.env.AWS_LAMBDA_FUNCTION_NAME
  ? new (await import('@aws-lambda-powertools/tracer')).Tracer({ serviceName: SERVICE })
  : { captureAWSv3Client: (client) => client };

/** The core's Logger interface over a Powertools logger. */
export function powertoolsCoreLogger(target: PowertoolsLogger = powertoolsLogger, context: LogFields = {}): Logger {
  const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
    const masked = redact({ ...context, ...fields }) as Record<string, unknown>;
    target[level](redact(msg) as string, masked);
  };
  return {
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (more) => powertoolsCoreLogger(target, { ...context, ...more }),
  };
}

/** The metric names the stack's dashboard and alarms read (lib/constructs/dashboard.ts). */
export const METRIC = {
  /** A job reached a final status; dimension `status`. */
  jobsFinished: 'JobsFinished',
  /** A flow turn ended waiting for people (an approval step or a ConsentGate): a new wait, or a wait's daily look. */
  approvalWaits: 'ApprovalWaits',
  /** The reaper failed jobs stuck queued or running (JobNeverStarted, JobWorkerLost). */
  reapedJobs: 'ReapedJobs',
  /** The reaper ended flow jobs whose execution failed, timed out or was stopped under them. */
  strandedFlows: 'StrandedFlows',
  /**
   * The flow runner handed its execution over by throwing (statemachines/flow-runner.ts): each is
   * one of the function's Errors, left out of the errors alarm. Stamped with the invocation's start.
   */
  flowHandOvers: 'FlowHandOvers',
} as const;

/** One job reached `status`: published at once (a single metric), so no flush is needed after. */
export function countJobFinished(status: string, target: Metrics = metrics): void {
  const single = target.singleMetric();
  single.addDimension('status', status);
  single.addMetric(METRIC.jobsFinished, MetricUnit.Count, 1);
}

/** A flow turn ended waiting for an approval or consent. */
export function countApprovalWait(target: Metrics = metrics): void {
  const single = target.singleMetric();
  single.addMetric(METRIC.approvalWaits, MetricUnit.Count, 1);
}

/** Advance handed its execution over (an answer thrown as an error), in the invocation that started at `invokedAt`. */
export function countHandOver(invokedAt: Date, target: Metrics = metrics): void {
  const single = target.singleMetric();
  single.setTimestamp(invokedAt);
  single.addMetric(METRIC.flowHandOvers, MetricUnit.Count, 1);
}

/** The reaper ended `count` jobs of one kind (a stuck job, a stranded flow); nothing is published for 0. */
export function countReaped(metric: typeof METRIC.reapedJobs | typeof METRIC.strandedFlows, count: number, target: Metrics = metrics): void {
  if (count <= 0) return;
  const single = target.singleMetric();
  single.addMetric(metric, MetricUnit.Count, count);
}
