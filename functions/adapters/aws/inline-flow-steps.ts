import type { WorkerDeps } from '../../core/deps.js';
import { awaitedJobs } from '../../core/flows/awaited-jobs.js';
import { getFlowRun } from '../../core/flows/run-state.js';
import { executeJob, jobRunTimeoutMs, leaseUntil } from '../../core/runs/worker.js';
import type { Job, JobQueue, JobRef, JobSlot, RunIntent } from '../../ports.js';

/**
 * Plain script steps run inside the flow runner's Advance (docs/aws.md "Costs"): a turn whose next
 * action is one script step claims the step job and runs it here, through the same sandbox
 * functions and tenant as the worker, then takes the next turn. No SQS message, task token or
 * state transition is spent on the step; the execution's transitions go to where the flow waits.
 *
 * A step runs here only if it can run to its end and be stored within the invocation: its timeout
 * plus INLINE_MARGIN_MS must fit in the time left; a longer one goes to the worker as before. The
 * turn that starts the step stores its job already `running` for this invocation (InlineSteps,
 * a JobQueue.reserve) with the lease a worker's claim would have, so the step costs one write and
 * its index entries fewer than stored queued and claimed. A step found queued (one an earlier
 * turn stored before a crash) is claimed as a worker would (claimJob, same lease). Either way a
 * step is run by one runner at a time. If the
 * invocation dies mid-step, Step Functions retries Advance: the step is `running` under the dead
 * invocation's lease, so the flow waits until that lease ends (`leaseEndsInSeconds`) and the next
 * Advance claims it again (attempt 2, as a redelivered worker message would).
 */

/** Time kept after a step's own timeout to store its outcome and answer Step Functions. */
export const INLINE_MARGIN_MS = 30_000;

/** A step run inline, as Advance's output names it (the console shows it in the Advance state). */
export interface InlineStep {
  jobId: string;
  step: string;
}

/** Whether a step allowed `timeoutMs` can run and be stored in the `remainingMs` left. */
export function fitsInline(timeoutMs: number, remainingMs: number): boolean {
  return timeoutMs + INLINE_MARGIN_MS <= remainingMs;
}

/**
 * Runs the script step `jobId` here when it fits and this caller claims it (a queued job, or a
 * running one whose lease ran out). Null: the step goes the worker's way (too long for the time
 * left, a sub-flow, held for a concurrency slot, or held by someone else).
 */
export async function runStepInline(deps: WorkerDeps, workspaceId: string, jobId: string, remainingMs: () => number): Promise<InlineStep | null> {
  const job = await deps.store.getJob(workspaceId, jobId);
  if (!job || job.kind === 'flow') return null;
  if (!fitsInline(await jobRunTimeoutMs(deps, job), remainingMs())) return null;
  const now = deps.clock.now();
  const claimed = await deps.store.claimJob(jobId, now.toISOString(), leaseUntil(now, deps.config));
  if (!claimed) return null;
  await executeJob(withoutWakeOf(deps, job.parent_job), jobId, claimed);
  return { jobId, step: job.flow_module ?? job.script_path };
}

/**
 * A step finished inside Advance needs no wake of its flow: the same invocation takes the flow's
 * next turn (and, if it dies first, Step Functions retries Advance, which finds the step done).
 * The wake would be a read and a write of the flow's wait record per step, for no one.
 */
function withoutWakeOf(deps: WorkerDeps, flowJobId: string | null): WorkerDeps {
  const flows = deps.flows;
  return {
    ...deps,
    flows: {
      dispatch: (jobs) => flows.dispatch(jobs),
      wakeAt: (ws, id, at) => flows.wakeAt(ws, id, at),
      wake: (ws, id, step) => (id === flowJobId ? Promise.resolve() : flows.wake(ws, id, step)),
    },
  };
}

/**
 * The flow runner's JobQueue for one Advance: the first script step a turn starts that fits in the
 * time left is stored running and kept for this invocation to run (`take`); anything else goes
 * the way of `base` (the table's stream: Step Functions sends it to the worker or a child flow).
 */
export class InlineSteps implements JobQueue {
  private held: Job | null = null;
  private reserved = false;

  constructor(
    private readonly base: JobQueue,
    private readonly deps: WorkerDeps,
    private readonly remainingMs: () => number,
  ) {}

  enqueue(job: Job): Promise<void> {
    return this.base.enqueue(job);
  }

  async reserve(_job: JobRef, intent: RunIntent): Promise<JobSlot | null> {
    const job = intent.job;
    if (this.reserved || !job || job.kind === 'flow' || !job.parent_job) return null;
    if (!fitsInline(await jobRunTimeoutMs(this.deps, job), this.remainingMs())) return null;
    this.reserved = true;
    return {
      run: (running) => {
        this.held = running;
      },
      cancel: () => {
        this.reserved = false;
      },
    };
  }

  /** The step this turn stored for this invocation, once: run it with runHeldStep. */
  take(): Job | null {
    const job = this.held;
    this.held = null;
    this.reserved = false;
    return job;
  }
}

/** Runs the step InlineSteps held for this invocation (stored running, so no claim). */
export async function runHeldStep(deps: WorkerDeps, job: Job): Promise<InlineStep> {
  await executeJob(withoutWakeOf(deps, job.parent_job), job.id, job);
  return { jobId: job.id, step: job.flow_module ?? job.script_path };
}

/** The flow's script steps still `running` (not sub-flows): when its runner waits, ones an earlier Advance may have left. */
export async function runningScriptSteps(deps: WorkerDeps, workspaceId: string, flowJobId: string): Promise<Job[]> {
  const run = await getFlowRun(deps, workspaceId, flowJobId);
  if (!run) return [];
  const jobs = await Promise.all(awaitedJobs(run).map((j) => deps.store.getJob(workspaceId, j.id)));
  return jobs.filter((j): j is Job => j !== null && j.kind !== 'flow' && j.status === 'running');
}

/** Seconds until the claim of a running step lapses (it was claimed at `started_at` with the worker's lease); 0 once it has. */
export function leaseEndsInSeconds(deps: WorkerDeps, job: Job): number {
  if (!job.started_at) return 0;
  const end = Date.parse(leaseUntil(new Date(job.started_at), deps.config));
  return Math.max(0, Math.ceil((end - deps.clock.now().getTime()) / 1000));
}
