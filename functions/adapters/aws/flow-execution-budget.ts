/**
 * When a flow's Step Functions execution hands over to a new one (continue-as-new). A Standard
 * execution ends at 25,000 history events or after one year, whichever comes first; the flow
 * runner counts the events its turns add (a conservative estimate from the states each action
 * enters: the real history is not read, which would cost a paged API call per turn) and, at the
 * first Advance past either budget, starts the flow job's next execution and lets this one end.
 *
 * Event counts per state, as Step Functions records them: a Lambda task 5 (entered, scheduled,
 * started, succeeded or failed, exited), a `.waitForTaskToken` task 6 (and submitted), a Pass or
 * Choice 2, a Map 4 plus, per item, 2 for the iteration and those of the states it enters.
 */

/** Hard limit of a Standard execution's history. */
export const HISTORY_LIMIT = 25_000;
/**
 * Continue once this many events are counted: the largest single action (a Map of MAP_BATCH
 * sub-flows, about 2,200 events) and the turn that reaches the limit still fit below it.
 */
export const DEFAULT_EVENT_BUDGET = 20_000;
/** Continue after this long: a Standard execution is stopped at one year, and a wait lasts up to a day. */
export const DEFAULT_AGE_BUDGET_SECONDS = 350 * 86_400;

const LAMBDA_TASK = 5;
const TOKEN_TASK = 6;
const CHOICE = 2;
const PASS = 2;
/** Advance and the two Pass states that read its hand-over back: every turn the execution goes on from. */
export const TURN_EVENTS = LAMBDA_TASK + 2 * PASS;

export type CountedAction = { action: 'run_step' } | { action: 'run'; steps: Array<{ kind: 'script' | 'flow' }> } | { action: 'wait' } | { action: 'continue' } | { action: 'done' };

/** The events a turn adds to the history: Advance, the hand-over's Pass states and what the action enters. */
export function eventsOfTurn(next: CountedAction): number {
  switch (next.action) {
    case 'run_step':
      return TURN_EVENTS + TOKEN_TASK;
    case 'run':
      // Map entered/started/succeeded/exited; each item: iteration started/succeeded, StepKind,
      // the task (a .sync child is followed like a token task), StepEnded when it failed.
      return TURN_EVENTS + 4 + next.steps.length * (2 + CHOICE + TOKEN_TASK + 2);
    case 'wait':
      return TURN_EVENTS + TOKEN_TASK;
    default:
      // The execution's last turn: Advance, and Failed, Canceled or Continued (a success ends with Advance).
      return LAMBDA_TASK + 2;
  }
}

export interface ExecutionBudget {
  events: number;
  ageSeconds: number;
}

/** Whether this execution should hand the flow to a new one before taking another turn. */
export function shouldContinue(spent: ExecutionBudget, budget: ExecutionBudget = { events: DEFAULT_EVENT_BUDGET, ageSeconds: DEFAULT_AGE_BUDGET_SECONDS }): boolean {
  return spent.events >= budget.events || spent.ageSeconds >= budget.ageSeconds;
}

/** The suffix of continued executions' names: `<flow path>-<job id>.c<n>` (job ids never hold a dot). */
const CONTINUATION = /\.c(\d+)$/;

/** Which continuation an execution name is: 0 for the first execution of a flow job. */
export function continuationOf(name: string): number {
  return Number(CONTINUATION.exec(name)?.[1] ?? 0);
}

export function continuationSuffix(continuation: number): string {
  return continuation > 0 ? `.c${continuation}` : '';
}
