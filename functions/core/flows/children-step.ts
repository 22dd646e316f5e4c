import { isFinished } from '../jobs/jobs.js';
import type { FlowModule } from './definition.js';
import type { FlowRun, FlowStep } from './flow-documents.js';
import type { Outcome } from './module-outcome.js';
import type { WorkerDeps } from '../deps.js';
import type { FinishedStep, Job } from '../../ports.js';

/**
 * A step that waits on several flow jobs: a loop's iterations or a branchall's branches (docs/flows.md).
 * The step keeps their ids and which have ended, so a turn costs the same for the 400th
 * iteration as for the first. Up to `runningAtOnce` run at a time; a sequential step stops at a
 * failed one unless its failures are skipped; once all have ended their results are read, once.
 */

export type ChildrenStep = Extract<FlowStep, { kind: 'children' }>;

/**
 * The most items a for loop goes over (SVC_FLOW_MAX_LOOP_ITEMS locally, FLOW_MAX_LOOP_ITEMS on AWS):
 * each iteration's run is written when the loop starts, so a longer list fails the step instead.
 */
export const DEFAULT_MAX_LOOP_ITEMS = 10_000;

/**
 * A loop's or a branchall's results together (the list it returns), in characters of JSON, may
 * be this many times a job's output cap (SVC_MAX_OUTPUT_BYTES, MAX_OUTPUT_BYTES on AWS), and
 * COLLECTED_RESULTS_FLOOR at least (AWS's cap is small: its results are many small ones): read and
 * stored at once, a list of thousands of large results would exhaust the memory of the process
 * that holds it (and, past V8's longest string, fail every turn of the flow for ever).
 */
export const COLLECTED_RESULTS_FACTOR = 16;
export const COLLECTED_RESULTS_FLOOR = 64 * 1024 * 1024;
/** Ended branches or iterations whose results are read at once. */
const READ_AT_ONCE = 32;

export function collectedResultsLimit(deps: Pick<WorkerDeps, 'config'>): number {
  return Math.max(deps.config.maxOutputBytes * COLLECTED_RESULTS_FACTOR, COLLECTED_RESULTS_FLOOR);
}

/** A value's size as stored, in characters of JSON. */
export function jsonChars(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

/** The step's failure when its results together passed the limit. */
export function resultsTooLarge(moduleId: string, chars: number, limit: number): Outcome {
  const message = `step ${moduleId}: its results together are more than ${limit} characters of JSON (${chars} read so far), this instance's limit`;
  return { ok: false, value: { error: { name: 'ResultTooLarge', message, step_id: moduleId, limit } }, stepJob: null };
}

/** What a turn of the interpreter lends the step: how to remake a job, and where jobs to insert go. */
export interface ChildrenTurn {
  /** The job of branch or iteration `index`, as it was made when the step started. */
  rebuild(index: number): Promise<Job>;
  /** New jobs, inserted once the run naming them is stored. */
  push: Job[];
  /** Jobs the run names but the store lacks (a crash between the two). */
  restart: Job[];
  /** Runs of ones that will never start, removed once the turn is stored: they hold the flow's input. */
  discard: string[];
}

/** How many run at once: every one of a parallel step, up to a loop's `parallelism`; else one at a time. */
export function runningAtOnce(module: FlowModule, count: number, parallel: boolean): number {
  if (!parallel) return 1;
  const v = module.value;
  return v.type === 'forloopflow' && v.parallelism ? Math.min(v.parallelism, count) : count;
}

/** The started branches or iterations not known to have ended, in order. */
export function openChildren(step: ChildrenStep): number[] {
  const open: number[] = [];
  for (let i = 0; i < step.started; i++) if (!step.ended[i]) open.push(i);
  return open;
}

/** The step's outcome once every branch or iteration has ended; null while some run (starting more when there is room). */
export async function collectChildren(
  deps: WorkerDeps,
  flowJob: Job,
  run: FlowRun,
  module: FlowModule,
  current: ChildrenStep,
  turn: ChildrenTurn,
  finishedStep: FinishedStep | undefined,
): Promise<Outcome | null> {
  await markEnded(deps, flowJob, current, turn, finishedStep);
  const open = openChildren(current).length;
  if (current.started < current.jobs.length) {
    if (!current.parallel && open === 0) {
      // A failed one ends a sequential step there (as a failed while-loop iteration does), unless failures are skipped.
      const failed = await failedLast(deps, flowJob, current, finishedStep);
      if (failed) {
        run.child_jobs = { ...run.child_jobs, [current.module]: current.jobs.slice(0, current.started) };
        turn.discard.push(...current.jobs.slice(current.started));
        return { ok: false, value: failed.result, stepJob: null };
      }
    }
    // Stored as not started until now, so no earlier attempt inserted them (one that did would have stored `started` first).
    const room = Math.min(current.jobs.length - current.started, runningAtOnce(module, current.jobs.length, current.parallel) - open);
    for (let k = 0; k < room; k++) turn.push.push(await turn.rebuild(current.started + k));
    current.started += Math.max(0, room);
    return null;
  }
  if (open > 0) return null;
  // Read a few at a time and measured as they come: 10,000 results of 5 MiB must not all be read first.
  const limit = collectedResultsLimit(deps);
  const jobs: (Job | null)[] = [];
  let chars = 0;
  for (let at = 0; at < current.jobs.length; at += READ_AT_ONCE) {
    const read = await Promise.all(current.jobs.slice(at, at + READ_AT_ONCE).map((id) => deps.store.getJob(flowJob.workspace_id, id)));
    for (const job of read) if (job && isFinished(job.status)) chars += jsonChars(job.result);
    if (chars > limit) return resultsTooLarge(module.id, chars, limit);
    jobs.push(...read);
  }
  const done = jobs.filter((j): j is Job => !!j && isFinished(j.status));
  if (done.length < jobs.length) {
    // One gone since (deleted by hand): run again, as a crash's lost insert is.
    for (const [i, job] of jobs.entries()) if (!job || !isFinished(job.status)) current.ended[i] = false;
    for (const [i, job] of jobs.entries()) if (!job) turn.restart.push(await turn.rebuild(i));
    return null;
  }
  const failed = done.findIndex((j, i) => j.status !== 'success' && !current.skip_failures[i]);
  if (failed !== -1) return { ok: false, value: done[failed].result, stepJob: null };
  return { ok: true, value: done.map((j) => j.result), stepJob: null };
}

/**
 * Marks in `current.ended` the started ones found ended. Woken by one that finished, the turn marks
 * it and reads on from the first open one only until it finds one running: a read or two however
 * many there are, and an end whose wake was lost is still found by the last wake. Any other turn
 * (a start, a runner's turn, a restart) reads every open one, and restarts those a crash lost.
 */
async function markEnded(deps: WorkerDeps, flowJob: Job, current: ChildrenStep, turn: ChildrenTurn, finishedStep: FinishedStep | undefined): Promise<void> {
  const open = openChildren(current);
  if (finishedStep) {
    const woke = current.jobs.indexOf(finishedStep.id);
    if (woke !== -1 && woke < current.started) current.ended[woke] = true;
    for (const i of open) {
      if (current.ended[i]) continue;
      const job = await deps.store.getJob(flowJob.workspace_id, current.jobs[i]);
      if (!job) turn.restart.push(await turn.rebuild(i));
      if (!job || !isFinished(job.status)) return;
      current.ended[i] = true;
    }
    return;
  }
  const jobs = await Promise.all(open.map((i) => deps.store.getJob(flowJob.workspace_id, current.jobs[i])));
  for (const [k, job] of jobs.entries()) {
    if (!job) turn.restart.push(await turn.rebuild(open[k]));
    else if (isFinished(job.status)) current.ended[open[k]] = true;
  }
}

/** The last started one of a sequential step, when it failed and its failure is not skipped. */
async function failedLast(deps: WorkerDeps, flowJob: Job, current: ChildrenStep, finishedStep: FinishedStep | undefined): Promise<{ result: unknown } | null> {
  const last = current.started - 1;
  if (current.skip_failures[last]) return null;
  const id = current.jobs[last];
  const ended = finishedStep?.id === id ? finishedStep : await deps.store.getJob(flowJob.workspace_id, id);
  return ended && ended.status !== 'success' ? { result: ended.result } : null;
}
