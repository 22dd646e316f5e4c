import { SFNClient } from '@aws-sdk/client-sfn';
import type { ScheduledEvent } from 'aws-lambda';
import { log } from '../core/common/logger.js';
import { isFinished } from '../core/jobs/jobs.js';
import { reapStuckJobs } from '../core/runs/stuck-jobs.js';
import { sweepConcurrencySlots } from '../core/jobs/concurrency.js';
import { settleOutcomes } from '../core/jobs/job-outcome.js';
import { endStrandedFlow, reconcileFlowJobs } from '../core/flows/stranded.js';
import { endedExecution, executionLookup, isExecutionStatusChange, supersededBy } from '../adapters/aws/flow-executions.js';
import { countReaped, METRIC } from '../adapters/aws/powertools.js';
import { awsShell, once, traced } from '../shells/aws.js';

/** Jobs failed per status in one pass: a pass takes seconds, the next one comes in minutes. */
const BATCH = 200;
/** Flow jobs whose execution is looked up in one pass (DescribeExecution allows bursts of 250 a second). */
const RECONCILE_BATCH = 100;
/** A flow running for less than this may not have its execution yet: it is looked at next time. */
const RECONCILE_AFTER_MS = 60_000;

const sfn = once(async () => traced(new SFNClient({})));

export type ReaperReport = { neverStarted: number; workerLost: number; released: number; strandedFlows: number; scheduleRunsCounted: number; scheduleHandlersStarted: number; errorHandlersStarted: number };

/**
 * The reaper Lambda, on an EventBridge schedule (lib/constructs/job-delivery.ts): fails jobs
 * queued longer than REAP_QUEUED_AFTER_SECONDS and script jobs running longer than
 * REAP_RUNNING_AFTER_SECONDS (the job timeout plus every redelivery the queue would still make),
 * and ends flow jobs whose execution ended without them (core/flows/stranded.ts).
 * First it lets go of runs waiting for a concurrency slot that a time window freed (core/jobs/concurrency.ts);
 * runs still waiting for one are never reaped. Last it counts the outcomes of scheduled runs a
 * stopped function left uncounted and starts the schedule handlers and workspace error handlers it
 * left unstarted (settleOutcomes, core/jobs/job-outcome.ts).
 *
 * The same function is the target of the stack's rule on "Step Functions Execution Status
 * Change" events (FAILED, TIMED_OUT, ABORTED): such an event ends its flow job at once.
 */
export async function handler(event?: ScheduledEvent | Record<string, unknown>): Promise<ReaperReport> {
  if (isExecutionStatusChange(event)) {
    const strandedFlows = (await onExecutionEnded(event)) ? 1 : 0;
    countReaped(METRIC.strandedFlows, strandedFlows);
    return { neverStarted: 0, workerLost: 0, released: 0, strandedFlows, scheduleRunsCounted: 0, scheduleHandlersStarted: 0, errorHandlersStarted: 0 };
  }
  const { deps } = await awsShell();
  // Runs waiting for a concurrency slot that a time window (or a lost worker) freed go on.
  const released = await sweepConcurrencySlots(deps);
  const limits = { queuedMs: seconds('REAP_QUEUED_AFTER_SECONDS') * 1000, runningMs: seconds('REAP_RUNNING_AFTER_SECONDS') * 1000, batch: BATCH };
  const reaped = await reapStuckJobs(deps, limits);
  const strandedFlows = (await reconcileFlows()).length;
  // Scheduled runs a stopped function left uncounted are counted, and the handlers it left unstarted start.
  const outcomes = await settleOutcomes(deps, deps.clock.now());
  const report = {
    neverStarted: reaped.neverStarted.length,
    workerLost: reaped.workerLost.length,
    released,
    strandedFlows,
    ...outcomes,
  };
  log.info('reaper pass', report);
  // The stack alarms on both (lib/constructs/alarms.ts): each is a run that went wrong unseen.
  countReaped(METRIC.reapedJobs, report.neverStarted + report.workerLost);
  countReaped(METRIC.strandedFlows, strandedFlows);
  return report;
}

/** Running flow jobs whose latest execution has ended are ended too: the net under the events. */
export async function reconcileFlows(olderThanMs = RECONCILE_AFTER_MS): Promise<string[]> {
  const { deps, config } = await awsShell();
  if (!config.stateMachineArn) return [];
  return reconcileFlowJobs(deps, executionLookup(await sfn(), config.stateMachineArn), { olderThanMs, batch: RECONCILE_BATCH });
}

/** An execution ended badly: its flow job ends, unless the flow went on in a later execution. */
async function onExecutionEnded(event: unknown): Promise<boolean> {
  const ended = endedExecution(event);
  const { deps, config } = await awsShell();
  if (!ended || ended.stateMachineArn !== config.stateMachineArn) {
    log.warn('execution status event ignored: not a flow-runner execution', {});
    return false;
  }
  const job = await deps.store.getJob(ended.workspaceId, ended.flowJobId);
  // Most failed executions are flows that failed or were canceled: their job ended first, and
  // nothing more is asked of Step Functions.
  if (!job || job.kind !== 'flow' || isFinished(job.status)) return false;
  if (await supersededBy(await sfn(), config.stateMachineArn, job, ended.outcome.execution)) return false;
  return endStrandedFlow(deps, ended.workspaceId, ended.flowJobId, ended.outcome);
}

function seconds(name: string): number {
  const value = Number(process.env[name]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive number of seconds, got ${JSON.stringify(process.env[name])}`);
  return value;
}
