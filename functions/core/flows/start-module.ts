import { queuedJob } from '../jobs/jobs.js';
import { tryCreateEntity } from '../store/entities.js';
import { readFlowRun, rememberFlowRun } from './run-cache.js';
import { admitStepJobs } from './step-admission.js';
import { childModulesAt, inputFromEnclosing, newRun, ownInput, runDocument } from './flow-run-document.js';
import { applyTransforms, evaluate, ExpressionError } from './expressions.js';
import { flowJobTarget, flowStepJobTarget, type JobTarget, type RunTarget } from '../jobs/run-target.js';
import { jobTargetOf, resolveStep, StepError } from './step-target.js';
import { expressionScope, type FlowRun } from './run-state.js';
import { startGate } from '../approvals/consent-gate.js';
import type { FlowModule } from './definition.js';
import { secondsOf, type Outcome } from './module-outcome.js';
import { iterationJob } from './while-loop.js';
import type { WorkerDeps } from '../deps.js';
import type { Job } from '../../ports.js';
import { findCachedResult, stepResultCacheKey } from '../jobs/result-cache.js';
import { DEFAULT_MAX_LOOP_ITEMS, runningAtOnce, type ChildrenStep } from './children-step.js';
import { jobDepth, MAX_FLOW_DEPTH } from '../runs/job-lineage.js';
import type { Effects } from './turn-effects.js';

/**
 * How each kind of flow module starts (advance.ts calls startModule when the run reaches it): a
 * script or flow step becomes one job, a branch or loop a flow job per branch or iteration (its run
 * stored first), a ConsentGate waits, an identity step is done at once. Nothing here writes a job:
 * the jobs go into the turn's effects, started once the run naming them is stored.
 */

/** Starts a module; returns its outcome when it completed at once (no job needed). */
export async function startModule(deps: WorkerDeps, flowJob: Job, run: FlowRun, module: FlowModule, effects: Effects): Promise<true | Outcome> {
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
export async function refusedJobs(deps: WorkerDeps, flowJob: Job, run: FlowRun, effects: Effects, moduleId: string, count: number): Promise<Outcome | null> {
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
export async function inlineFlow(deps: WorkerDeps, flowJob: Job, run: FlowRun, module: FlowModule, modules: FlowModule[], flowInput: Record<string, unknown>, now = deps.clock.now().toISOString()): Promise<Job> {
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
export async function childJob(deps: WorkerDeps, flowJob: Job, run: FlowRun, step: ChildrenStep, index: number): Promise<Job> {
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
