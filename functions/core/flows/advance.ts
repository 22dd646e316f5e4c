import { errorOf, insertRunningHere, isFinished, queuedJob } from '../jobs/jobs.js';
import { getEntityValue, tryCreateEntity } from '../store/entities.js';
import { readFlowJob, readFlowRun, rememberFlowRun } from './run-cache.js';
import { storeTurn, type Start } from './store-turn.js';
import { admitStepJobs, nothingCounted, uncount, type CountedJobs } from './step-admission.js';
import { childModulesAt, copyRun, inputFromEnclosing, ownInput, runDocument, TOP_LEVEL_MODULES } from './flow-run-document.js';
import { applyTransforms, evaluate, ExpressionError } from './expressions.js';
import { findFlowVersion } from './flows.js';
import { flowJobTarget, flowStepJobTarget, type JobTarget, type RunTarget } from '../jobs/run-target.js';
import { jobTargetOf, resolveStep, StepError } from './step-target.js';
import { expressionScope, finish, type FlowRun, type FlowStep } from './run-state.js';
import { FLOW_LEVEL } from '../approvals/approval-count.js';
import { settleGate, startGate } from '../approvals/consent-gate.js';
import { settleSuspendStep } from '../approvals/suspend-step.js';
import type { FlowModule } from './definition.js';
import { failFlow, secondsOf, settleModule, skipsModule, type Outcome } from './module-outcome.js';
import { iterationJob, settleIteration } from './while-loop.js';
import { gateWithPendingNotices, notifyApprovers } from '../approvals/gate-notices.js';
import { deleteSharedFolder, usesSharedFolder } from './shared-folder.js';
import type { WorkerDeps } from '../deps.js';
import type { FinishedJob, FinishedStep, Job } from '../../ports.js';
import { AGAIN, RACE, retry } from '../common/retry.js';
import { onJobFailed, onJobSucceeded } from '../jobs/job-outcome.js';
import { findCachedResult, stepResultCacheKey, storeCachedResult, storeCacheHit } from '../jobs/result-cache.js';
import type { CachedResultValue } from '../documents/entity-values.js';
import { leaveSlot } from '../jobs/concurrency.js';
import { collectChildren, DEFAULT_MAX_LOOP_ITEMS, jsonChars, runningAtOnce, type ChildrenStep } from './children-step.js';
import { jobDepth, MAX_FLOW_DEPTH } from '../runs/job-lineage.js';
import { awaitedJobs, cancelJobs, type AwaitedJob } from './awaited-jobs.js';

/**
 * The flow interpreter: looks at a flow job's run and takes it as far as it can go without
 * waiting — starting the next step, collecting a finished one, suspending, resuming, failing or
 * finishing. It is called whenever something may have changed (the flow job starts, a step job
 * finishes, an approval or cancel arrives, a suspend timeout is due) and may be called any number
 * of times: the run is stored with optimistic versions, and jobs are started only after the state
 * naming them was stored, so a crash or a concurrent call never loses or doubles a step.
 */

const ATTEMPTS = 20;

/** Effects to carry out once the new state is stored. */
interface Effects {
  /** Jobs made by this call (new ids): nobody can have inserted them yet. */
  push: Job[];
  /** Jobs the stored state names but the store lacks (a crash between the two): inserted unless there by now. */
  restart: Job[];
  cancel: AwaitedJob[];
  /** Runs of branches or iterations that will never start (their step stopped or was canceled): removed with what they hold. */
  discard: string[];
  /** A suspended step's timeout: the flow must be woken then. */
  wakeAt: Date | null;
  /** ConsentGates just reached, whose approvers are to be told. */
  notify: string[];
  /** Steps answered from their `cache_ttl` cache: stored as finished jobs marked `cache_hit`. */
  cacheHits: { job: Job; cached: CachedResultValue; ttl: number }[];
  /** Steps with `cache_ttl` that succeeded: their result answers identical steps within the TTL. */
  cacheStores: { job: Job; result: unknown; ttl: number; key: string }[];
  /** The new jobs this turn counted on its run's top (step-admission.ts): given back when it stores nothing. */
  counted: CountedJobs;
}

/** `finishedStep`: a step job whose completion was just stored (the worker's wake), so it is not read back. */
export async function advanceFlow(deps: WorkerDeps, workspaceId: string, flowJobId: string, finishedStep?: FinishedStep): Promise<void> {
  await retry({ attempts: ATTEMPTS, ...RACE, exhausted: () => new Error(`flow ${flowJobId}: too many concurrent updates`) }, async () => {
    const job = await readFlowJob(deps.store, workspaceId, flowJobId);
    if (!job || job.kind !== 'flow') return;
    const entity = await readFlowRun(deps.store, workspaceId, flowJobId);
    const run = entity ? copyRun(entity.value) : await initialRun(deps, job);
    if (!run) return;
    const effects: Effects = { push: [], restart: [], cancel: [], discard: [], wakeAt: null, notify: [], cacheHits: [], cacheStores: [], counted: nothingCounted() };
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

export function newRun(flowJob: string, version: number, path: string, modules: FlowModule[], flowInput: Record<string, unknown>, outerResults: Record<string, unknown>): FlowRun {
  return {
    flow_job: flowJob,
    version,
    path,
    modules,
    flow_input: flowInput,
    outer_results: outerResults,
    results: {},
    previous_result: null,
    resume: null,
    resumes: [],
    approvers: [],
    index: 0,
    step: null,
    status: 'running',
    events: {},
    step_modules: {},
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

/** Starts a module; returns its outcome when it completed at once (no job needed). */
async function startModule(deps: WorkerDeps, flowJob: Job, run: FlowRun, module: FlowModule, effects: Effects): Promise<true | Outcome> {
  const scope = expressionScope(run);
  const v = module.value;
  if (module === run.failure_module && run.failure) run.failure.started = true;
  // Before anything the step makes is stored: a branch's or iteration's run is written as it starts.
  const admit = (count: number) => admitStepJobs(deps, flowJob, run, effects.counted, module.id, count);
  try {
    switch (v.type) {
      case 'identity':
        return { ok: true, value: run.previous_result, stepJob: null };
      case 'consentgate':
        await startGate(deps, flowJob, run, module, v);
        if (v.notify.length > 0) effects.notify.push(module.id);
        if (v.timeout !== undefined && run.step?.kind === 'gate' && run.step.deadline) effects.wakeAt = new Date(run.step.deadline);
        return true;
      case 'rawscript': {
        const args = await applyTransforms(deps, flowJob, v.input_transforms, scope);
        const timeout = module.timeout === undefined ? undefined : await secondsOf(deps, flowJob, run, module.timeout, `step ${module.id}: timeout`);
        await admit(1);
        const job = stepJob(deps.clock.now().toISOString(), flowJob, run, flowStepJobTarget(run.path, run.version, module.id, v.language), args, module.priority);
        return (await cachedStep(deps, run, module, job, effects)) ?? child(run, module, effects, job, timeout);
      }
      case 'script': {
        const target: RunTarget = v.hash ? { by: 'hash', hash: v.hash } : { by: 'path', path: v.path, only: 'script' };
        const runnable = await resolveStep(deps, flowJob, target, module.id, `no script ${v.hash ?? v.path}`);
        const args = await applyTransforms(deps, flowJob, v.input_transforms, scope);
        const timeout = module.timeout === undefined ? undefined : await secondsOf(deps, flowJob, run, module.timeout, `step ${module.id}: timeout`);
        await admit(1);
        const job = stepJob(deps.clock.now().toISOString(), flowJob, run, jobTargetOf(runnable), args, module.priority);
        return (await cachedStep(deps, run, module, job, effects)) ?? child(run, module, effects, job, timeout);
      }
      case 'flow': {
        // A flow that runs itself (directly or through others) would nest for ever, each level a job.
        if ((await jobDepth(deps.store, flowJob.workspace_id, flowJob, MAX_FLOW_DEPTH)) >= MAX_FLOW_DEPTH) {
          throw new StepError('FlowDepthLimit', `step ${module.id}: flow ${v.path} would run ${MAX_FLOW_DEPTH + 1} levels of flows deep, beyond the limit of ${MAX_FLOW_DEPTH}`);
        }
        const runnable = await resolveStep(deps, flowJob, { by: 'path', path: v.path, only: 'flow' }, module.id, `no flow ${v.path}`);
        const args = await applyTransforms(deps, flowJob, v.input_transforms, scope);
        await admit(1);
        return child(run, module, effects, stepJob(deps.clock.now().toISOString(), flowJob, run, jobTargetOf(runnable), args, module.priority));
      }
      case 'branchone': {
        const taken = await evaluate(deps, flowJob, v.branches.map((b) => b.expr), scope);
        const index = taken.findIndex(Boolean);
        const modules = index === -1 ? v.default : v.branches[index].modules;
        if (modules.length === 0) return { ok: true, value: run.previous_result, stepJob: null };
        await admit(1);
        return child(run, module, effects, await inlineFlow(deps, flowJob, run, module, modules, run.flow_input));
      }
      case 'branchall': {
        await admit(v.branches.length);
        const now = deps.clock.now().toISOString();
        const jobs = await Promise.all(v.branches.map((b) => inlineFlow(deps, flowJob, run, module, b.modules, run.flow_input, now)));
        return children(run, module, effects, jobs, v.parallel, v.branches.map((b) => b.skip_failure ?? false));
      }
      case 'forloopflow': {
        const [items] = v.iterator.type === 'static' ? [v.iterator.value] : await evaluate(deps, flowJob, [v.iterator.expr], scope);
        if (!Array.isArray(items)) throw new StepError('InvalidIterator', `step ${module.id}: the iterator is not an array`);
        // Every iteration's run is written now: a list of millions would be millions of writes in one turn.
        const most = deps.config.flowMaxLoopItems ?? DEFAULT_MAX_LOOP_ITEMS;
        if (items.length > most) throw new StepError('ForLoopLimit', `step ${module.id}: the iterator has ${items.length} items, more than this instance's limit of ${most}`);
        await admit(items.length);
        // Each iteration is a flow of its own that reads the item as flow_input.iter (Windmill's habit).
        const now = deps.clock.now().toISOString();
        const jobs = await Promise.all(items.map((value, index) => inlineFlow(deps, flowJob, run, module, v.modules, { ...run.flow_input, iter: { value, index } }, now)));
        return children(run, module, effects, jobs, v.parallel, jobs.map(() => v.skip_failures));
      }
      case 'whileloopflow': {
        await admit(1);
        const first = await iterationJob(run, module, 0, (input) => inlineFlow(deps, flowJob, run, module, v.modules, input));
        run.step = { kind: 'while', module: module.id, job: first, iteration: 0, results: [] };
        effects.push.push(first);
        return true;
      }
    }
  } catch (e) {
    if (!(e instanceof ExpressionError || e instanceof StepError)) throw e;
    return stepFailed(module.id, e);
  }
}

function stepFailed(moduleId: string, e: ExpressionError | StepError): Outcome {
  return { ok: false, value: { error: { name: e.name, message: e.message, step_id: moduleId, ...(e instanceof StepError ? e.details : {}) } }, stepJob: null };
}

/** The step's failure when its `count` new jobs may not be made (step-admission.ts); null when they were counted. */
async function refusedJobs(deps: WorkerDeps, flowJob: Job, run: FlowRun, effects: Effects, moduleId: string, count: number): Promise<Outcome | null> {
  try {
    await admitStepJobs(deps, flowJob, run, effects.counted, moduleId, count);
    return null;
  } catch (e) {
    if (!(e instanceof StepError)) throw e;
    return stepFailed(moduleId, e);
  }
}

/** `priority`: the step's own (Windmill's module `priority`); a step without one is taken at 0. */
function stepJob(now: string, flowJob: Job, run: FlowRun, target: JobTarget, args: Record<string, unknown>, priority?: number | null): Job {
  return queuedJob(now, {
    workspace_id: flowJob.workspace_id,
    ...target,
    parent_job: run.flow_job,
    args,
    created_by: flowJob.created_by,
    created_scopes: flowJob.created_scopes ?? null,
    ...(priority ? { priority } : {}),
  });
}

/**
 * A step with `cache_ttl` whose identical step (same flow version, code, arguments and starter)
 * succeeded within the TTL: it runs nothing; its job is stored finished with that result, marked
 * `cache_hit`, once the run naming it is stored (carryOut).
 */
async function cachedStep(deps: WorkerDeps, run: FlowRun, module: FlowModule, job: Job, effects: Effects): Promise<Outcome | null> {
  if (!module.cache_ttl) return null;
  const cached = await findCachedResult(deps, job.workspace_id, stepResultCacheKey(run.version, module.id, job));
  if (!cached) return null;
  run.step_modules[job.id] = module.id;
  run.cache_hits = { ...run.cache_hits, [module.id]: job.id };
  effects.cacheHits.push({ job, cached, ttl: module.cache_ttl });
  return { ok: true, value: cached.result, stepJob: job.id };
}

/** A branch or iteration: a flow job whose run is stored before the job exists. */
async function inlineFlow(deps: WorkerDeps, flowJob: Job, run: FlowRun, module: FlowModule, modules: FlowModule[], flowInput: Record<string, unknown>, now = deps.clock.now().toISOString()): Promise<Job> {
  const inputFrom = inputFromEnclosing(run, flowInput);
  // Its job's arguments are what it adds to the flow's input (an iteration's `iter`), not a copy of
  // that input per iteration; its steps see the whole input as flow_input.
  const job = inlineFlowJob(now, flowJob, run, module.id, ownInput({ flow_input: flowInput, input_from: inputFrom }));
  const modulesAt = childModulesAt(run, module, modules);
  const inner: FlowRun = {
    ...newRun(job.id, run.version, run.path, modules, flowInput, { ...run.outer_results, ...run.results }),
    outer_from: run.flow_job,
    ...(inputFrom ? { input_from: inputFrom } : {}),
    ...(modulesAt === undefined ? {} : { modules_at: modulesAt }),
    same_worker: run.same_worker,
    shared_folder: run.shared_folder,
    ...(run.jobs_counted_on ? { jobs_counted_on: run.jobs_counted_on } : {}),
  };
  const written = await tryCreateEntity(deps.store, deps.clock, 'flow_run', job.workspace_id, job.id, runDocument(inner));
  if (written) rememberFlowRun({ ...written, value: inner });
  return job;
}

/** The job of a branch or iteration of `moduleId`; the same again from what its children step keeps (`childJob`). */
function inlineFlowJob(now: string, flowJob: Job, run: FlowRun, moduleId: string, flowInput: Record<string, unknown>, id?: string): Job {
  const job = stepJob(now, flowJob, run, flowJobTarget(`${run.path}/${moduleId}`, run.version), flowInput);
  return id === undefined ? job : { ...job, id };
}

/** The job of branch or iteration `index` as it was made: its arguments are its run's input, stored before the step was. */
async function childJob(deps: WorkerDeps, flowJob: Job, run: FlowRun, step: ChildrenStep, index: number): Promise<Job> {
  const id = step.jobs[index];
  const inner = await readFlowRun(deps.store, flowJob.workspace_id, id);
  if (!inner) throw new Error(`flow ${flowJob.id}: the run of its ${step.module} job ${id} is missing`);
  return inlineFlowJob(step.created_at, flowJob, run, step.module, ownInput(inner.value), id);
}

/** `timeout`: the seconds the step's job may run, which the worker reads from the run (worker.ts). */
function child(run: FlowRun, module: FlowModule, effects: Effects, job: Job, timeout?: number): true {
  run.step = { kind: 'child', module: module.id, job };
  run.step_modules[job.id] = module.id;
  if (timeout !== undefined && timeout > 0) run.step_timeouts = { ...run.step_timeouts, [job.id]: timeout };
  effects.push.push(job);
  return true;
}

/** `jobs` were made at one time (their `created_at`), which the step keeps to rebuild them (childJob). */
function children(run: FlowRun, module: FlowModule, effects: Effects, jobs: Job[], parallel: boolean, skipFailures: boolean[]): true | Outcome {
  if (jobs.length === 0) return { ok: true, value: [], stepJob: null };
  const started = runningAtOnce(module, jobs.length, parallel);
  const ids = jobs.map((j) => j.id);
  run.child_jobs = { ...run.child_jobs, [module.id]: ids };
  run.step = { kind: 'children', module: module.id, jobs: ids, created_at: jobs[0].created_at, parallel, started, ended: jobs.map(() => false), skip_failures: skipFailures };
  effects.push.push(...jobs.slice(0, started));
  return true;
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
