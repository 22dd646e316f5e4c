import { errorOf, insertRunningHere, isFinished } from '../jobs/jobs.js';
import { readFlowJob, readFlowRun } from './run-cache.js';
import { storeTurn, type Start } from './store-turn.js';
import { uncount } from './step-admission.js';
import { copyRun, newRun, TOP_LEVEL_MODULES } from './flow-run-document.js';
import { childJob, inlineFlow, refusedJobs, startModule } from './start-module.js';
import { noEffects, type Effects } from './turn-effects.js';
import { ExpressionError } from './expressions.js';
import { findFlowVersion } from './flows.js';
import { finish, type FlowRun, type FlowStep } from './run-state.js';
import { settleGate } from '../approvals/consent-gate.js';
import { settleSuspendStep } from '../approvals/suspend-step.js';
import type { FlowModule } from './definition.js';
import { failFlow, settleModule, skipsModule, type Outcome } from './module-outcome.js';
import { iterationJob, settleIteration } from './while-loop.js';
import { gateWithPendingNotices, notifyApprovers } from '../approvals/gate-notices.js';
import { deleteSharedFolder, usesSharedFolder } from './shared-folder.js';
import type { WorkerDeps } from '../deps.js';
import type { FinishedJob, FinishedStep, Job } from '../../ports.js';
import { AGAIN, RACE, retry } from '../common/retry.js';
import { onJobFailed, onJobSucceeded } from '../jobs/job-outcome.js';
import { stepResultCacheKey, storeCachedResult, storeCacheHit } from '../jobs/result-cache.js';
import { leaveSlot } from '../jobs/concurrency.js';
import { collectChildren, jsonChars } from './children-step.js';
import { awaitedJobs, cancelJobs } from './awaited-jobs.js';

/**
 * The flow interpreter: looks at a flow job's run and takes it as far as it can go without
 * waiting — starting the next step, collecting a finished one, suspending, resuming, failing or
 * finishing. It is called whenever something may have changed (the flow job starts, a step job
 * finishes, an approval or cancel arrives, a suspend timeout is due) and may be called any number
 * of times: the run is stored with optimistic versions, and jobs are started only after the state
 * naming them was stored, so a crash or a concurrent call never loses or doubles a step.
 */

const ATTEMPTS = 20;

/** `finishedStep`: a step job whose completion was just stored (the worker's wake), so it is not read back. */
export async function advanceFlow(deps: WorkerDeps, workspaceId: string, flowJobId: string, finishedStep?: FinishedStep): Promise<void> {
  await retry({ attempts: ATTEMPTS, ...RACE, exhausted: () => new Error(`flow ${flowJobId}: too many concurrent updates`) }, async () => {
    const job = await readFlowJob(deps.store, workspaceId, flowJobId);
    if (!job || job.kind !== 'flow') return;
    const entity = await readFlowRun(deps.store, workspaceId, flowJobId);
    const run = entity ? copyRun(entity.value) : await initialRun(deps, job);
    if (!run) return;
    const effects = noEffects();
    let starts: Start[] | null = null;
    try {
      await step(deps, job, run, effects, finishedStep);
      starts = await storeTurn(deps, workspaceId, flowJobId, run, entity, effects.push);
    } finally {
      if (!starts) await uncount(deps, effects.counted);
    }
    if (!starts) return AGAIN;
    await carryOut(deps, job, run, effects, starts);
  });
}

/** A top-level flow job's run starts from its version and its arguments. */
async function initialRun(deps: WorkerDeps, job: Job): Promise<FlowRun | null> {
  const version = job.flow_version === null ? null : await findFlowVersion(deps.store, job.workspace_id, job.flow_version);
  if (!version) {
    await deps.store.completeJob(job.id, { status: 'failed', result: { error: { name: 'FlowNotFound', message: `flow version ${job.flow_version} no longer exists` } }, logs: '' }, deps.clock.now().toISOString());
    return null;
  }
  return {
    ...newRun(job.id, version.id, version.path, version.value.modules, job.args ?? {}, {}),
    modules_at: TOP_LEVEL_MODULES,
    early_return: version.value.early_return,
    // A flow (a sub-flow too) has a shared folder of its own; its branches and iterations use it.
    same_worker: version.value.same_worker ?? false,
    shared_folder: job.id,
    ...(version.value.failure_module ? { failure_module: version.value.failure_module } : {}),
  };
}

/** Moves the run forward in memory, collecting the jobs to start or stop. */
async function step(deps: WorkerDeps, job: Job, run: FlowRun, effects: Effects, finishedStep: FinishedStep | undefined): Promise<void> {
  if (run.status === 'finished') return;
  if (isFinished(job.status)) {
    // Cancelled from outside: stop what runs on its behalf.
    effects.cancel.push(...awaitedJobs(run));
    if (run.step?.kind === 'children') effects.discard.push(...run.step.jobs.slice(run.step.started));
    finish(run, { status: job.status as 'canceled', result: job.result });
    return;
  }
  for (;;) {
    if ((run.status as FlowRun['status']) === 'finished') return;
    const current = run.step;
    if (current === null) {
      const next = nextModule(run);
      if (!next) return finish(run, { status: 'success', result: run.previous_result });
      if (next !== run.failure_module && (await skipping(deps, job, run, next))) continue;
      const started = await startModule(deps, job, run, next, effects);
      if (started === true) return;
      await moduleEnded(deps, job, run, next, started);
      continue;
    }
    const module = current.module === run.failure_module?.id && run.failure ? run.failure_module : run.modules[run.index];
    if (current.kind === 'wait') {
      // A retry delay or a sleep: the shell wakes the flow at `until` (a timer; a Step Functions wait).
      if (Date.parse(current.until) <= deps.clock.now().getTime()) {
        run.step = null;
        continue;
      }
      effects.wakeAt = new Date(current.until);
      return;
    }
    if (current.kind === 'while') {
      const ended = await collect(deps, job, { kind: 'child', module: current.module, job: current.job }, effects, finishedStep);
      if (!ended) return;
      const settled = await settleIteration(deps, job, run, module, current, ended);
      if (settled === 'next') {
        const refused = await refusedJobs(deps, job, run, effects, module.id, 1);
        if (refused) {
          await moduleEnded(deps, job, run, module, refused);
          continue;
        }
        const next = await iterationJob(run, module, current.iteration + 1, (jobs) => inlineFlow(deps, job, run, module, module.value.type === 'whileloopflow' ? module.value.modules : [], jobs));
        run.step = { ...current, job: next, iteration: current.iteration + 1, results: [...current.results, ended.value], results_chars: (current.results_chars ?? 0) + jsonChars(ended.value) };
        effects.push.push(next);
        return;
      }
      await moduleEnded(deps, job, run, module, settled);
      continue;
    }
    if (current.kind === 'suspend') {
      const settled = await settleSuspendStep(deps, job, run, current, module);
      if (settled === 'failed') return;
      if (settled) continue;
      if (current.deadline !== null) effects.wakeAt = new Date(current.deadline);
      return;
    }
    if (current.kind === 'gate') {
      if (module.value.type !== 'consentgate') throw new Error(`flow ${job.id}: gate ${module.id} is not a consentgate`);
      if (settleGate(run, current, module, module.value, job.created_by, deps.clock.now())) continue;
      // Notices a dead process stored as pending but never sent (gate-notices.ts).
      const unsent = gateWithPendingNotices(run);
      if (unsent) effects.notify.push(unsent);
      if (current.deadline !== null) effects.wakeAt = new Date(current.deadline);
      return;
    }
    const outcome =
      current.kind === 'children'
        ? await collectChildren(deps, job, run, module, current, { rebuild: (i) => childJob(deps, job, run, current, i), push: effects.push, restart: effects.restart, discard: effects.discard }, finishedStep)
        : await collect(deps, job, current, effects, finishedStep);
    if (!outcome) return;
    if (outcome.ok && module.cache_ttl && current.kind === 'child') {
      effects.cacheStores.push({ job: current.job, result: outcome.value, ttl: module.cache_ttl, key: stepResultCacheKey(run.version, module.id, current.job) });
    }
    await moduleEnded(deps, job, run, module, outcome);
  }
}

/** The module to start next: the failure module once the flow failed, else the next in order. */
function nextModule(run: FlowRun): FlowModule | null {
  if (run.failure) return run.failure.started ? null : run.failure_module!;
  return run.index < run.modules.length ? run.modules[run.index] : null;
}

/** `skip_if` true: the module does not run (an expression that fails fails the flow). */
async function skipping(deps: WorkerDeps, job: Job, run: FlowRun, module: FlowModule): Promise<boolean> {
  try {
    return await skipsModule(deps, job, run, module);
  } catch (e) {
    if (!(e instanceof ExpressionError)) throw e;
    failFlow(run, module.id, { error: { name: e.name, message: e.message, step_id: module.id } });
    return true;
  }
}

/** A module ended: the failure module's outcome ends the flow; any other's is settled (retry, stop, sleep, next). */
async function moduleEnded(deps: WorkerDeps, job: Job, run: FlowRun, module: FlowModule, outcome: Outcome): Promise<void> {
  if (run.failure && module === run.failure_module) {
    // The flow stays failed; the failure module's result is its result (its own error, if it failed too).
    const result = outcome.ok ? outcome.value : { error: { ...((run.failure.result as { error?: object })?.error ?? {}), failure_module_error: outcome.value } };
    return finish(run, { status: run.failure.status ?? 'failed', result });
  }
  await settleModule(deps, job, run, module, outcome);
}

/** The outcome of the step's job, or null while it runs. Restarts it when a crash lost it. */
async function collect(deps: WorkerDeps, flowJob: Job, current: Extract<FlowStep, { kind: 'child' }>, effects: Effects, finishedStep: FinishedStep | undefined): Promise<Outcome | null> {
  // A finished job never changes again, so the completion the worker stored is the job's outcome.
  if (finishedStep?.id === current.job.id) return { ok: finishedStep.status === 'success', value: finishedStep.result, stepJob: finishedStep.id };
  const job = await deps.store.getJob(flowJob.workspace_id, current.job.id);
  if (!job) {
    effects.restart.push(current.job);
    return null;
  }
  if (!isFinished(job.status)) return null;
  return { ok: job.status === 'success', value: job.result, stepJob: job.id };
}

/** Once the state is stored (with `starts`, the new jobs): start and stop jobs, complete the flow job, wake its parent. */
async function carryOut(deps: WorkerDeps, flowJob: Job, run: FlowRun, effects: Effects, starts: Start[]): Promise<void> {
  const started: Job[] = [];
  for (const job of effects.restart) {
    // One found missing may have been inserted by another call since.
    if (await deps.store.getJob(job.workspace_id, job.id)) continue;
    // A worker free in this process takes it at once; otherwise it goes the flow driver's way.
    if (await insertRunningHere(deps, job, { callerWaits: false, timeoutMs: deps.config.jobTimeoutMs, job })) continue;
    await deps.store.insertJob(job);
    started.push(job);
  }
  for (const { job, slot } of starts) {
    if (slot) slot.run(job);
    else started.push(job);
  }
  if (started.length > 0) await deps.flows.dispatch(started);
  for (const hit of effects.cacheHits) await storeCacheHit(deps, hit.job, hit.cached, hit.ttl);
  for (const done of effects.cacheStores) await storeCachedResult(deps, done.job, done.result, done.ttl, done.key);
  const now = deps.clock.now().toISOString();
  await cancelJobs(deps, effects.cancel, 'the flow was canceled');
  for (const id of effects.discard) await deps.store.deleteEntity('flow_run', flowJob.workspace_id, id);
  let finished: FinishedJob | undefined;
  if (run.outcome && !isFinished(flowJob.status)) {
    const { status, result } = run.outcome;
    // Kept before the run is seen finished: whoever saw it finish and runs it again is answered from the cache.
    if (status === 'success') await cacheFlowResult(deps, flowJob, result);
    if (await deps.store.completeJob(flowJob.id, { status, result, logs: '' }, now)) finished = { status, result };
  }
  if (run.status === 'finished' && run.shared_folder === flowJob.id && usesSharedFolder(run)) await deleteSharedFolder(deps, flowJob.workspace_id, flowJob.id);
  deps.signals.notify(flowJob.id, finished);
  for (const moduleId of effects.notify) await notifyApprovers(deps, flowJob, moduleId);
  if (effects.wakeAt) await deps.flows.wakeAt(flowJob.workspace_id, flowJob.id, effects.wakeAt);
  // The parent's turn takes this outcome as it was stored here, as a worker's wake gives a script step's.
  if (run.status === 'finished' && flowJob.parent_job) await deps.flows.wake(flowJob.workspace_id, flowJob.parent_job, finished ? { id: flowJob.id, ...finished } : undefined);
  if (finished?.status === 'failed') await onJobFailed(deps, flowJob, errorOf(finished.result));
  if (finished) await leaveSlot(deps, flowJob);
  if (finished?.status === 'success') await onJobSucceeded(deps, flowJob);
}

/** A flow run (not a branch or iteration) of a version with `cache_ttl`: its result answers identical runs within the TTL. */
async function cacheFlowResult(deps: WorkerDeps, flowJob: Job, result: unknown): Promise<void> {
  if (flowJob.parent_job !== null || flowJob.flow_version === null || flowJob.cache_hit) return;
  const ttl = (await findFlowVersion(deps.store, flowJob.workspace_id, flowJob.flow_version))?.value.cache_ttl;
  if (ttl) await storeCachedResult(deps, flowJob, result, ttl);
}
