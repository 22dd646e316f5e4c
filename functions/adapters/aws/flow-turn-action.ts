import type { RunnerAction, RunnerStep } from '../../core/flows/runner-action.js';
import { MAP_BATCH } from '../../../statemachines/flow-runner.js';
import { executionName } from './step-functions-flow-runner.js';

/**
 * What the flow-runner state machine (statemachines/flow-runner.ts) does after a turn of the
 * core's interpreter, shaped for its fewest states: a lone script step is `run_step` (run by
 * Advance itself when it fits, inline-flow-steps.ts; else four transitions: Advance, the two
 * Pass states reading its hand-over, RunScriptStep); anything else to run goes through the Map,
 * at most MAP_BATCH steps at a time, fewer when the hand-over would pass 32 KB
 * (flow-hand-over.ts), so the state stays small whatever the loop's size (the next turn lists the
 * steps still queued: the loop's items themselves stay in the store, offloaded to S3 when large).
 */
export type TurnAction =
  | Exclude<RunnerAction, { action: 'run' }>
  | { action: 'run_step'; step: { jobId: string } }
  | { action: 'run'; steps: Array<RunnerStep & { executionName: string }> };

export function turnAction(next: RunnerAction, wakeCheckSeconds: number): TurnAction {
  if (next.action === 'run') {
    const [only] = next.steps;
    if (next.steps.length === 1 && only.kind === 'script') return { action: 'run_step', step: { jobId: only.jobId } };
    return { action: 'run', steps: next.steps.slice(0, MAP_BATCH).map((s) => ({ ...s, executionName: executionName(s.path, s.jobId) })) };
  }
  // A deadline further off than a day is looked at daily, like a wait without one: the
  // interpreter checks the deadline itself on every turn, and the execution's age gets checked.
  if (next.action === 'wait' && next.timeoutSeconds !== undefined) return { action: 'wait', timeoutSeconds: Math.min(next.timeoutSeconds, wakeCheckSeconds) };
  return next;
}
