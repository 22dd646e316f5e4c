import { evaluate, ExpressionError, type ExpressionOwner } from './expressions.js';
import { collectedResultsLimit, jsonChars, resultsTooLarge } from './children-step.js';
import { expressionScope, type FlowRun, type FlowStep } from './run-state.js';
import type { FlowModule } from './definition.js';
import type { Outcome } from './module-outcome.js';
import type { WorkerDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * A `whileloopflow` runs its modules again and again, one iteration (a flow job of its own, like a
 * for loop's) after the other, until its `stop_after_if` is true for an iteration's result. An
 * expression that is never true must not loop for ever: the instance caps the iterations
 * (SVC_FLOW_MAX_WHILE_ITERATIONS locally, FLOW_MAX_WHILE_ITERATIONS on AWS) and a loop reaching
 * the cap fails.
 */

export const DEFAULT_MAX_WHILE_ITERATIONS = 1000;

/** Iteration `index`'s flow job: its flow_input has `iter: {index, value: index}` (the modelled service's habit). */
export async function iterationJob(run: FlowRun, module: FlowModule, index: number, inlineFlow: (flowInput: Record<string, unknown>) => Promise<Job>): Promise<Job> {
  const job = await inlineFlow({ ...run.flow_input, iter: { index, value: index } });
  run.child_jobs = { ...run.child_jobs, [module.id]: [...(run.child_jobs?.[module.id] ?? []), job.id] };
  return job;
}

/** After an iteration: another one (`next`), or the loop's outcome (every iteration's result, or its error). */
export async function settleIteration(
  deps: WorkerDeps,
  owner: ExpressionOwner,
  run: FlowRun,
  module: FlowModule,
  current: Extract<FlowStep, { kind: 'while' }>,
  ended: Outcome,
): Promise<'next' | Outcome> {
  const skipFailures = module.value.type === 'whileloopflow' && module.value.skip_failures;
  if (!ended.ok && !skipFailures) return { ok: false, value: ended.value, stepJob: null };
  const results = [...current.results, ended.value];
  // Counted as they come (results_chars), as a for loop's are once it ends.
  const limit = collectedResultsLimit(deps);
  const chars = (current.results_chars ?? 0) + jsonChars(ended.value);
  if (chars > limit) return resultsTooLarge(module.id, chars, limit);
  const rule = module.stop_after_if;
  if (rule) {
    try {
      const [stop] = await evaluate(deps, owner, [rule.expr], { ...expressionScope(run), result: ended.value, iter: { index: current.iteration } });
      if (stop) return { ok: true, value: results, stepJob: null };
    } catch (e) {
      if (!(e instanceof ExpressionError)) throw e;
      return { ok: false, value: { error: { name: e.name, message: e.message, step_id: module.id } }, stepJob: null };
    }
  }
  const cap = deps.config.flowMaxWhileIterations ?? DEFAULT_MAX_WHILE_ITERATIONS;
  if (current.iteration + 1 >= cap) {
    const message = `step ${module.id}: the while loop ran ${cap} iterations, this instance's limit, without its stop_after_if being true`;
    return { ok: false, value: { error: { name: 'WhileLoopLimit', message, step_id: module.id, iterations: cap } }, stepJob: null };
  }
  return 'next';
}
