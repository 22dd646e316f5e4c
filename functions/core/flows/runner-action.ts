import { isFinished } from '../jobs/jobs.js';
import { advanceFlow } from './advance.js';
import { awaitedJobs, cancelFlowSteps } from './awaited-jobs.js';
import { readFlowRun } from './run-cache.js';
import type { CoreDeps, WorkerDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * What an external flow runner (the Step Functions state machine) does after each turn of the
 * interpreter: run step jobs and wait for them, wait to be woken (approvals, a cancel) with an
 * optional timeout, or stop. The interpreter decides; the runner only waits.
 */
export type RunnerAction =
  | { action: 'run'; steps: RunnerStep[] }
  | { action: 'wait'; timeoutSeconds?: number }
  | { action: 'done'; status: 'success' | 'failed' | 'canceled' };

export interface RunnerStep {
  jobId: string;
  workspaceId: string;
  /** `script` steps run on a worker; `flow` steps (sub-flows, branches, iterations) run as flows of their own. */
  kind: 'script' | 'flow';
  path: string;
}

/** A flow's run stays claimed by its runner; no worker takes it over. */
const FLOW_LEASE_MS = 366 * 24 * 3600 * 1000;

/**
 * One turn of the flow job's interpreter, and what the runner must do next. The first turn claims
 * the job (it was queued by the run endpoint). Safe to repeat: a turn that crashed after storing
 * its state is redone, and every step job it started that is still `queued` is listed again to be
 * run — a runner only lets go of a step once its job has finished, so a queued one was never sent.
 */
export async function advanceForRunner(deps: WorkerDeps, workspaceId: string, flowJobId: string): Promise<RunnerAction> {
  const before = await deps.store.getJob(workspaceId, flowJobId);
  if (!before || before.kind !== 'flow') return { action: 'done', status: 'failed' };
  if (before.status === 'queued') {
    const now = deps.clock.now();
    await deps.store.claimJob(flowJobId, now.toISOString(), new Date(now.getTime() + FLOW_LEASE_MS).toISOString());
  }
  await advanceFlow(deps, workspaceId, flowJobId);

  const job = await deps.store.getJob(workspaceId, flowJobId);
  if (!job) return { action: 'done', status: 'failed' };
  if (isFinished(job.status)) return { action: 'done', status: job.status as 'success' | 'failed' | 'canceled' };
  // The turn just stored it: read back through this process's cache, its modules not resolved again.
  const run = (await readFlowRun(deps.store, workspaceId, flowJobId))?.value;
  if (!run) return { action: 'wait' };

  const awaited = await Promise.all(awaitedJobs(run).map((j) => deps.store.getJob(workspaceId, j.id)));
  const toRun = awaited.filter((j): j is Job => j?.status === 'queued');
  if (toRun.length > 0) {
    return { action: 'run', steps: toRun.map((j) => ({ jobId: j.id, workspaceId, kind: j.kind === 'flow' ? 'flow' : 'script', path: j.script_path })) };
  }
  // Suspend steps and ConsentGates wait on the same task: a wake (approval, consent, cancel) or the deadline.
  // A retry delay or a sleep is a wait with a deadline too: no Lambda runs while the flow waits.
  const deadline = run.step?.kind === 'suspend' || run.step?.kind === 'gate' ? run.step.deadline : run.step?.kind === 'wait' ? run.step.until : null;
  if (deadline === null) return { action: 'wait' };
  // Timeouts are whole seconds, at least one; the interpreter checks the deadline itself when woken.
  return { action: 'wait', timeoutSeconds: Math.max(1, Math.ceil((Date.parse(deadline) - deps.clock.now().getTime()) / 1000)) };
}

/**
 * The runner could not advance the flow, even after its retries: the flow job fails, with what
 * went wrong, instead of staying `running` for ever; its steps are stopped and its parent woken.
 */
export async function abandonFlow(deps: CoreDeps, workspaceId: string, flowJobId: string, cause: string): Promise<void> {
  const message = `the flow runner could not advance this flow: ${cause.slice(0, 500)}`;
  const result = { error: { name: 'FlowRunnerError', message } };
  const failed = await deps.store.completeJob(flowJobId, { status: 'failed', result, logs: '' }, deps.clock.now().toISOString());
  if (failed) deps.signals.notify(flowJobId, { status: 'failed', result });
  await cancelFlowSteps(deps, workspaceId, flowJobId);
  const job = await deps.store.getJob(workspaceId, flowJobId);
  if (job?.parent_job) await deps.flows.wake(workspaceId, job.parent_job);
}
