import { isFinished } from '../jobs/jobs.js';
import { log } from '../common/logger.js';
import { onJobFailed } from '../jobs/job-outcome.js';
import { leaveSlot } from '../jobs/concurrency.js';
import { cancelFlowSteps } from './awaited-jobs.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * A flow runner's execution can end without its flow job ending: it failed (a state with no
 * catch, or the runner's own `Abandon` failing), it was stopped by hand, or it reached its time
 * limit. Nothing would then ever finish the job, and whatever waits on it (a parent flow, a sync
 * caller, an SSE stream) would wait for ever. These rules end such a job, however the shell
 * learnt that its execution ended (an execution status event, or a periodic reconcile).
 */

/** How an execution ended without finishing its flow job, as Step Functions reports it. */
export type ExecutionEnd = 'FAILED' | 'TIMED_OUT' | 'ABORTED';

export const EXECUTION_ENDS: readonly ExecutionEnd[] = ['FAILED', 'TIMED_OUT', 'ABORTED'];

/** The error a stranded flow job is failed with, as its result: `{ error: { name, message } }`. */
export const STRANDED_FLOW_ERRORS: Record<ExecutionEnd, string> = {
  FAILED: 'FlowExecutionFailed',
  TIMED_OUT: 'FlowExecutionTimedOut',
  ABORTED: 'FlowExecutionAborted',
};

const WHAT_HAPPENED: Record<ExecutionEnd, string> = {
  FAILED: 'failed',
  TIMED_OUT: 'reached its time limit',
  ABORTED: 'was stopped',
};

export interface ExecutionOutcome {
  status: ExecutionEnd;
  /** The execution's name, so the message points at it in the console. */
  execution: string;
  /** Step Functions' error and cause, when it gave them. */
  error?: string | null;
  cause?: string | null;
}

/**
 * Fails the flow job whose execution ended as `outcome` says, cancels the steps it was waiting
 * for, and wakes its waiters. A job that already finished keeps its outcome (a flow that failed
 * or was canceled ends its execution in a Fail state too). Returns whether the job was ended here.
 */
export async function endStrandedFlow(deps: CoreDeps, workspaceId: string, flowJobId: string, outcome: ExecutionOutcome): Promise<boolean> {
  const job = await deps.store.getJob(workspaceId, flowJobId);
  if (!job || job.kind !== 'flow' || isFinished(job.status)) return false;
  const name = STRANDED_FLOW_ERRORS[outcome.status];
  const detail = [outcome.error, outcome.cause].filter(Boolean).join(': ').slice(0, 500);
  const message = `the flow's execution ${outcome.execution} ${WHAT_HAPPENED[outcome.status]}${detail ? ` (${detail})` : ''}, so the flow cannot go on`;
  const result = { error: { name, message } };
  const failed = await deps.store.completeJob(job.id, { status: 'failed', result, logs: job.logs }, deps.clock.now().toISOString());
  if (!failed) return false;
  log.warn('stranded flow failed', { job_id: job.id, workspace_id: workspaceId, reason: name });
  // A sync caller or an SSE stream waiting on the job hears of it.
  deps.signals.notify(job.id, { status: 'failed', result });
  await cancelFlowSteps(deps, workspaceId, job.id);
  await leaveSlot(deps, job);
  // A sub-flow's parent goes on (and fails or recovers as its definition says).
  if (job.parent_job) await deps.flows.wake(workspaceId, job.parent_job);
  await onJobFailed(deps, job, { name, message });
  return true;
}

/** How the shell finds how a flow job's latest execution stands: null while it runs, or when it has none. */
export type ExecutionLookup = (job: Job) => Promise<ExecutionOutcome | 'running' | null>;

export interface ReconcileLimits {
  /** Only flows running at least this long are looked at: a younger one's execution may be starting. */
  olderThanMs: number;
  /** Flow jobs looked at in one pass. */
  batch: number;
}

/**
 * One reconcile pass: every running flow job whose execution has ended is ended too. The safety
 * net under the execution status events, which EventBridge delivers at least once but may delay
 * or, when its target keeps failing, give up on.
 */
export async function reconcileFlowJobs(deps: CoreDeps, lookup: ExecutionLookup, limits: ReconcileLimits): Promise<string[]> {
  const before = new Date(deps.clock.now().getTime() - limits.olderThanMs).toISOString();
  const ended: string[] = [];
  const running = (await deps.store.listStaleJobs('running', before, Number.MAX_SAFE_INTEGER)).filter((j) => j.kind === 'flow');
  // Past a batch, a random one: flows waiting a long time on approvals never hide the rest.
  for (const job of sample(running, limits.batch)) {
    const outcome = await lookup(job);
    if (!outcome || outcome === 'running') continue;
    if (await endStrandedFlow(deps, job.workspace_id, job.id, outcome)) ended.push(job.id);
  }
  return ended;
}

function sample<T>(items: T[], size: number): T[] {
  if (items.length <= size) return items;
  const copy = [...items];
  for (let i = 0; i < size; i++) {
    const j = i + Math.floor(Math.random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, size);
}
