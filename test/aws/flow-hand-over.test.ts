import { describe, expect, it } from 'vitest';
import { CAUSE_LIMIT, FlowHandOver, handOver, readableCause } from '../../functions/adapters/aws/flow-hand-over.js';
import { turnAction } from '../../functions/adapters/aws/flow-turn-action.js';
import { HAND_OVER, MAP_BATCH, WAKE_CHECK_SECONDS } from '../../statemachines/flow-runner.js';

/**
 * What Advance answers the state machine (statemachines/flow-runner.ts): a flow that succeeded is
 * returned (its execution ends), anything else is thrown as the hand-over error the state machine
 * routes on, whose Cause, the Lambda error as the Node runtime reports it, Step Functions keeps up
 * to 32,768 characters.
 */

const ids = { workspaceId: 'main', flowJobId: '0d9c5b6e-2f4a-4c1e-9a77-c1234567890a', wakes: 0, events: 7 };

/** The Cause Step Functions records for a function error (the runtime's error JSON). */
function causeOf(error: Error): string {
  return JSON.stringify({ errorType: error.name, errorMessage: error.message, trace: (error.stack ?? '').split('\n') });
}

function thrown(answer: Parameters<typeof handOver>[0]): FlowHandOver {
  const out = handOver(answer);
  if (!('error' in out)) throw new Error('expected a hand-over');
  return out.error;
}

describe('the hand-over of an Advance', () => {
  it('returns a flow that succeeded, so its execution ends with Advance', () => {
    const done = { ...ids, action: 'done', status: 'success', ran: [{ jobId: 'j1', step: 'a' }], ranCount: 1 };
    expect(handOver(done)).toEqual({ result: done });
  });

  it('names every other answer after what the execution does next, its message the answer itself', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ action: 'run_step', step: { jobId: 'j2' } }, HAND_OVER.runStep],
      [{ action: 'run', steps: [{ jobId: 'j3', kind: 'flow', executionName: 'f-j3' }] }, HAND_OVER.run],
      [{ action: 'wait', timeoutSeconds: 60 }, HAND_OVER.waitUntilDeadline],
      [{ action: 'wait' }, HAND_OVER.waitForWake],
      [{ action: 'continue' }, HAND_OVER.continue],
      [{ action: 'done', status: 'failed' }, HAND_OVER.failed],
      [{ action: 'done', status: 'canceled' }, HAND_OVER.canceled],
    ];
    for (const [answer, name] of cases) {
      const error = thrown({ ...ids, ...answer } as never);
      expect(error.name).toBe(name);
      expect(JSON.parse(error.message)).toEqual({ ...ids, ...answer });
      // What the state machine's two Pass states do: parse the Cause, then its errorMessage.
      expect(JSON.parse((JSON.parse(causeOf(error)) as { errorMessage: string }).errorMessage)).toEqual({ ...ids, ...answer });
    }
  });

  it('reads in the console as what the flow waits for, without the message twice', () => {
    const error = thrown({ ...ids, action: 'wait', timeoutSeconds: 3600 });
    expect(error.stack).toBe('FlowWaitUntilDeadline: waits to be woken, at most 3600 s');
    expect(JSON.parse(causeOf(error))).toMatchObject({ errorType: 'FlowWaitUntilDeadline', trace: ['FlowWaitUntilDeadline: waits to be woken, at most 3600 s'] });
  });

  it('keeps the largest Map hand-over within the Cause Step Functions keeps, handing the rest to the next turn', () => {
    const longPath = `f/${'a_rather_long_folder_name/'.repeat(9)}loop`;
    const steps = Array.from({ length: 5_000 }, (_, i) => ({ jobId: `${ids.flowJobId.slice(0, -4)}${String(i).padStart(4, '0')}`, workspaceId: 'main', kind: 'flow' as const, path: longPath }));
    const action = turnAction({ action: 'run', steps }, WAKE_CHECK_SECONDS);
    const ran = Array.from({ length: 50 }, (_, i) => ({ jobId: steps[i].jobId, step: longPath }));
    const error = thrown({ ...ids, ...(action as { action: 'run'; steps: unknown[] }), ran, ranCount: 50 });
    expect(causeOf(error).length).toBeLessThan(CAUSE_LIMIT);
    const turn = JSON.parse(error.message) as { steps: unknown[]; ran: unknown[]; ranCount: number };
    // The listed inline steps go first; the Map still gets a good share of the batch, in order.
    expect(turn.ran).toEqual([]);
    expect(turn.ranCount).toBe(50);
    expect(turn.steps.length).toBeGreaterThan(60);
    expect(turn.steps.length).toBeLessThan(MAP_BATCH);
    expect(turn.steps[0]).toEqual((action as { steps: unknown[] }).steps[0]);
  });

  it('gives Abandon a Lambda error as type and message, and any other cause as it is', () => {
    expect(readableCause(JSON.stringify({ errorType: 'Error', errorMessage: 'table gone', trace: ['Error: table gone', '    at x'] }))).toBe('Error: table gone');
    expect(readableCause('States.Timeout')).toBe('States.Timeout');
  });
});
