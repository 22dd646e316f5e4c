import { evaluate, ExpressionError, type ExpressionOwner } from './expressions.js';
import { retryDelaySeconds } from './retry-policy.js';
import { expressionScope, finish, type FlowRun, type StepAttempt } from './run-state.js';
import { isTriggerStep, type FlowModule, type SecondsSetting, type StopAfterIf } from './definition.js';
import type { WorkerDeps } from '../deps.js';

/**
 * What happens once a module has run (the interpreter's decisions after a step, advance.ts): a
 * failed step is tried again after its retry delay, or fails the flow (which then runs its
 * failure module), or the flow goes on; a `stop_after_if` may end the flow there; a `sleep` makes
 * the flow wait before the next step. Waits are a step of the run (`wait`) that the shell wakes
 * at its time, so no worker or process is held while the flow waits.
 */

export type Outcome = { ok: boolean; value: unknown; stepJob: string | null };

/** The longest a flow sleeps after one step. */
const MAX_SLEEP_SECONDS = 30 * 24 * 3600;

export async function settleModule(deps: WorkerDeps, owner: ExpressionOwner, run: FlowRun, module: FlowModule, outcome: Outcome): Promise<void> {
  run.step = null;
  const now = deps.clock.now();
  if (module.retry) {
    const attempts = (run.attempts ??= {})[module.id] ?? [];
    const attempt: StepAttempt = { attempt: attempts.length + 1, job: outcome.stepJob, status: outcome.ok ? 'success' : 'failed', at: now.toISOString(), ...(outcome.ok ? {} : { error: errorPart(outcome.value) }) };
    run.attempts[module.id] = [...attempts, attempt];
    const delay = outcome.ok ? null : retryDelaySeconds(module.retry, attempt.attempt);
    if (delay !== null) {
      // The same module starts again once the wait is over (the run's index has not moved).
      attempt.retry_at = new Date(now.getTime() + delay * 1000).toISOString();
      run.step = { kind: 'wait', module: module.id, until: attempt.retry_at, reason: 'retry' };
      return;
    }
  }
  if (!outcome.ok && !module.continue_on_error) return failFlow(run, module.id, withStep(outcome.value, module.id));
  run.results[module.id] = outcome.value;
  run.previous_result = outcome.value;
  if (module.id === run.early_return && outcome.ok && !run.early_result) run.early_result = { value: outcome.value };
  const stopRule = isLoop(module) ? module.stop_after_all_iters_if : module.stop_after_if;
  if (stopRule && (await stopsHere(deps, owner, run, module, stopRule, outcome.value))) return;
  // A trigger step watches for new events: with none (an empty list), the flow has nothing to do.
  if (isTriggerStep(module) && outcome.ok && Array.isArray(outcome.value) && outcome.value.length === 0) {
    run.stopped_early = module.id;
    return finish(run, { status: 'success', result: outcome.value });
  }
  if (module.suspend && outcome.ok && outcome.stepJob) {
    run.step = { kind: 'suspend', module: module.id, resume_job: outcome.stepJob, required: module.suspend.required_events, deadline: null, step_result: outcome.value };
    run.status = 'suspended';
    return;
  }
  run.index += 1;
  if (module.sleep === undefined) return;
  const seconds = await secondsOf(deps, owner, run, module.sleep, `step ${module.id}: sleep`).catch((e: unknown) => failOnExpression(run, module.id, e));
  if (seconds === undefined || seconds <= 0) return;
  run.step = { kind: 'wait', module: module.id, until: new Date(now.getTime() + Math.min(seconds, MAX_SLEEP_SECONDS) * 1000).toISOString(), reason: 'sleep' };
}

/** `stop_after_if`: evaluated with the step's `result`; when true the flow ends here, as the rule says. */
async function stopsHere(deps: WorkerDeps, owner: ExpressionOwner, run: FlowRun, module: FlowModule, rule: StopAfterIf, result: unknown): Promise<boolean> {
  let stop: unknown;
  try {
    [stop] = await evaluate(deps, owner, [rule.expr], { ...expressionScope(run), result });
  } catch (e) {
    failOnExpression(run, module.id, e);
    return true;
  }
  if (!stop) return false;
  run.stopped_early = module.id;
  run.stop = { module: module.id, skipped: rule.skip_if_stopped ?? false, ...(rule.error_message ? { error_message: rule.error_message } : {}) };
  if (rule.error_message) {
    failFlow(run, module.id, { error: { name: 'FlowStopped', message: rule.error_message, step_id: module.id } });
  } else {
    finish(run, { status: 'success', result });
  }
  return true;
}

/** `skip_if`: true when the module is not to run at all. */
export async function skipsModule(deps: WorkerDeps, owner: ExpressionOwner, run: FlowRun, module: FlowModule): Promise<boolean> {
  if (!module.skip_if) return false;
  const [skip] = await evaluate(deps, owner, [module.skip_if.expr], expressionScope(run));
  if (!skip) return false;
  run.skipped = [...(run.skipped ?? []), module.id];
  run.index += 1;
  return true;
}

/** A number of seconds given as a number, a static value or an expression. */
export async function secondsOf(deps: WorkerDeps, owner: ExpressionOwner, run: FlowRun, setting: SecondsSetting, what: string): Promise<number> {
  const value = typeof setting === 'number' ? setting : setting.type === 'static' ? setting.value : (await evaluate(deps, owner, [setting.expr], expressionScope(run)))[0];
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new ExpressionError(`${what} is not a number of seconds (${JSON.stringify(value)})`);
  return value;
}

/**
 * The flow fails with `result`, the failed step's result with its error: when the flow has a
 * failure module, it runs first (advance.ts starts it) and its result becomes the flow's; the
 * flow then ends with `status` (an approval step canceled or timed out ends it canceled, spec 3).
 */
export function failFlow(run: FlowRun, stepId: string, result: unknown, status: 'failed' | 'canceled' = 'failed'): void {
  if (run.failure_module && !run.failure) {
    run.failure = { result, step_id: stepId, started: false, ...(status === 'canceled' ? { status } : {}) };
    run.previous_result = result;
    run.step = null;
    run.status = 'running';
    return;
  }
  finish(run, { status, result });
}

function failOnExpression(run: FlowRun, stepId: string, e: unknown): undefined {
  if (!(e instanceof ExpressionError)) throw e;
  failFlow(run, stepId, { error: { name: e.name, message: e.message, step_id: stepId } });
  return undefined;
}

export function withStep(value: unknown, stepId: string): unknown {
  if (value && typeof value === 'object' && 'error' in value && value.error && typeof value.error === 'object') {
    return { error: { ...(value.error as object), step_id: (value.error as { step_id?: string }).step_id ?? stepId } };
  }
  return { error: { name: 'StepFailed', message: `step ${stepId} failed`, step_id: stepId, result: value } };
}

function errorPart(value: unknown): unknown {
  return value && typeof value === 'object' && 'error' in value ? (value as { error: unknown }).error : value;
}

function isLoop(module: FlowModule): boolean {
  return module.value.type === 'forloopflow' || module.value.type === 'whileloopflow';
}
