import { HAND_OVER } from '../../../statemachines/flow-runner.js';

/**
 * How Advance hands its execution over (statemachines/flow-runner.ts): a Task state cannot end
 * the execution on some outputs only, so the flow-runner function returns only when the flow
 * succeeded (the execution ends there, one billed transition) and otherwise throws a hand-over
 * error, named after what the execution does next, its message Advance's answer as JSON. Step
 * Functions keeps a failed task's Cause (the Lambda error `{"errorType","errorMessage","trace"}`)
 * up to 32,768 characters, so the answer is fitted below that: the steps listed as run inline are
 * trimmed first (they are counted anyway), then the steps handed to the Map (the next turn lists
 * those still queued).
 */

export type HandOverName = (typeof HAND_OVER)[keyof typeof HAND_OVER];

/** What the function answers, as far as the hand-over reads it. */
export interface TurnAnswer {
  action: string;
  status?: string;
  timeoutSeconds?: number;
  step?: { jobId: string };
  steps?: unknown[];
  ran?: unknown[];
  ranCount?: number;
}

/** The longest Cause Step Functions records for a failed task. */
export const CAUSE_LIMIT = 32_768;
/** The message's share of it, JSON-escaped as the Cause carries it: the type and trace take the rest. */
export const MESSAGE_BUDGET = 30_000;

export class FlowHandOver extends Error {
  constructor(
    readonly handOver: HandOverName,
    answer: TurnAnswer,
  ) {
    super(JSON.stringify(answer));
    this.name = handOver;
    // The Lambda runtime sends the stack as the error's trace: one readable line, not the message again.
    this.stack = `${handOver}: ${summary(answer)}`;
  }
}

/** The hand-over for an answer, or null when the flow succeeded and the execution ends with Advance. */
export function handOverName(answer: TurnAnswer): HandOverName | null {
  switch (answer.action) {
    case 'run_step':
      return HAND_OVER.runStep;
    case 'run':
      return HAND_OVER.run;
    case 'wait':
      return answer.timeoutSeconds === undefined ? HAND_OVER.waitForWake : HAND_OVER.waitUntilDeadline;
    case 'continue':
      return HAND_OVER.continue;
    default:
      if (answer.status === 'success') return null;
      return answer.status === 'canceled' ? HAND_OVER.canceled : HAND_OVER.failed;
  }
}

/** The answer as the function's result, or the hand-over error to throw instead. */
export function handOver<T extends TurnAnswer>(answer: T): { result: T } | { error: FlowHandOver } {
  const name = handOverName(answer);
  return name ? { error: new FlowHandOver(name, fitted(answer)) } : { result: answer };
}

/** How long `value` is as JSON inside the Cause's JSON string. */
const escapedLength = (value: unknown): number => JSON.stringify(JSON.stringify(value)).length - 2;

/** The answer, its lists trimmed until its message fits MESSAGE_BUDGET. */
export function fitted<T extends TurnAnswer>(answer: T): T {
  if (escapedLength(answer) <= MESSAGE_BUDGET) return answer;
  let fit: T = answer;
  // The console's list of the steps run inline goes first, from its oldest (ranCount keeps the total).
  if (fit.ran) {
    const ran = [...fit.ran];
    while (ran.length > 0 && escapedLength({ ...fit, ran }) > MESSAGE_BUDGET) ran.shift();
    fit = { ...fit, ran };
  }
  if (fit.steps && escapedLength(fit) > MESSAGE_BUDGET) {
    // Each step kept adds its own length and a comma; at least one is always handed over.
    let used = escapedLength({ ...fit, steps: [] });
    const steps: unknown[] = [];
    for (const step of fit.steps) {
      const more = escapedLength(step) + (steps.length > 0 ? 1 : 0);
      if (steps.length > 0 && used + more > MESSAGE_BUDGET) break;
      steps.push(step);
      used += more;
    }
    fit = { ...fit, steps };
  }
  return fit;
}

/** One line for the console and the logs: what the execution does next. */
function summary(answer: TurnAnswer): string {
  switch (answer.action) {
    case 'run_step':
      return `sends step job ${answer.step?.jobId ?? '?'} to the worker and waits for it`;
    case 'run':
      return `runs ${answer.steps?.length ?? 0} step(s) in the Map and waits for them`;
    case 'wait':
      return answer.timeoutSeconds === undefined ? 'waits to be woken' : `waits to be woken, at most ${answer.timeoutSeconds} s`;
    case 'continue':
      return "the flow goes on in its job's next execution";
    default:
      return `the flow job ended ${answer.status ?? 'failed'}`;
  }
}

/** A Lambda error's Cause as a person reads it (`type: message`); any other cause as it is. */
export function readableCause(cause: string): string {
  try {
    const parsed: unknown = JSON.parse(cause);
    if (parsed && typeof parsed === 'object' && 'errorMessage' in parsed) {
      const { errorType, errorMessage } = parsed as { errorType?: unknown; errorMessage?: unknown };
      return `${typeof errorType === 'string' ? `${errorType}: ` : ''}${String(errorMessage)}`;
    }
  } catch {
    // not JSON: a cause Step Functions wrote itself (a timeout, say)
  }
  return cause;
}
