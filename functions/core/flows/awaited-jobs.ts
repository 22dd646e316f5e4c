import { cancelSignal } from '../jobs/jobs.js';
import { getFlowRun, type FlowRun } from './run-state.js';
import { openChildren } from './children-step.js';
import type { WorkerDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * What a flow run waits on right now, and stopping it: the interpreter cancels these when its flow
 * job was canceled (advance.ts), and a cancel reaches them at once, down through sub-flows.
 */

/** Cancels jobs still running or queued; their workers see it and stop them. */
export async function cancelJobs(deps: Pick<WorkerDeps, 'store' | 'signals' | 'clock'>, jobs: AwaitedJob[], message: string): Promise<void> {
  const now = deps.clock.now().toISOString();
  for (const job of jobs) {
    if (await deps.store.completeJob(job.id, { status: 'canceled', result: { error: { name: 'Canceled', message } }, logs: '' }, now)) {
      deps.signals.notify(job.id);
      deps.signals.notify(cancelSignal(job.id));
    }
  }
}

/** A job a flow run waits on (in the run's workspace): which, and whether it is a flow (a sub-flow, branch or iteration) or a script. */
export type AwaitedJob = Pick<Job, 'id' | 'kind'>;

/** The jobs a flow run is waiting on right now: its current step's script jobs or flow jobs. */
export function awaitedJobs(run: FlowRun): AwaitedJob[] {
  const step = run.step;
  if (step?.kind === 'child' || step?.kind === 'while') return [step.job];
  if (step?.kind === 'children') return openChildren(step).map((i) => ({ id: step.jobs[i], kind: 'flow' }));
  return [];
}

/**
 * A canceled flow stops what runs on its behalf at once, down through its sub-flows, without
 * waiting for its interpreter's next turn (which, on Step Functions, comes only when the steps end).
 */
export async function cancelFlowSteps(deps: Pick<WorkerDeps, 'store' | 'signals' | 'clock'>, workspaceId: string, flowJobId: string): Promise<void> {
  const run = await getFlowRun(deps, workspaceId, flowJobId);
  if (!run || run.status === 'finished') return;
  const jobs = awaitedJobs(run);
  await cancelJobs(deps, jobs, 'the flow was canceled');
  for (const job of jobs) if (job.kind === 'flow') await cancelFlowSteps(deps, workspaceId, job.id);
}
