import { describe, expect, it } from 'vitest';
import { continuationOf, DEFAULT_AGE_BUDGET_SECONDS, DEFAULT_EVENT_BUDGET, eventsOfTurn, HISTORY_LIMIT, shouldContinue } from '../../functions/adapters/aws/flow-execution-budget.js';
import { turnAction } from '../../functions/adapters/aws/flow-turn-action.js';
import { executionName } from '../../functions/adapters/aws/step-functions-flow-runner.js';
import { MAP_BATCH, WAKE_CHECK_SECONDS } from '../../statemachines/flow-runner.js';

/**
 * The arithmetic behind continue-as-new and the state's size, at the real (deployed) numbers the
 * emulator tests shrink: a Standard execution has 25,000 history events, one year, 256 KB of state.
 */

const YEAR = 365 * 86_400;
const id = '0d9c5b6e-2f4a-4c1e-9a77-c1234567890a';

describe('the flow execution budget', () => {
  it('hands a long sequential flow over before its history fills', () => {
    const perStep = eventsOfTurn({ action: 'run_step' });
    // The last turn before the budget is spent still fits, with the largest Map after it.
    const largestMap = eventsOfTurn({ action: 'run', steps: Array.from({ length: MAP_BATCH }, () => ({ kind: 'flow' as const })) });
    expect(DEFAULT_EVENT_BUDGET + perStep + largestMap).toBeLessThan(HISTORY_LIMIT);
    expect(shouldContinue({ events: DEFAULT_EVENT_BUDGET - 1, ageSeconds: 0 })).toBe(false);
    expect(shouldContinue({ events: DEFAULT_EVENT_BUDGET, ageSeconds: 0 })).toBe(true);
    // About 1,300 steps sent to the worker per execution (each a hand-over and RunScriptStep).
    expect(Math.floor(DEFAULT_EVENT_BUDGET / perStep)).toBeGreaterThan(1_300);
  });

  it('hands a waiting flow over before its execution is a year old, and a year of daily looks fits the history', () => {
    expect(shouldContinue({ events: 0, ageSeconds: DEFAULT_AGE_BUDGET_SECONDS })).toBe(true);
    // The budget, plus one more wait of a day and a turn, is still short of the year.
    expect(DEFAULT_AGE_BUDGET_SECONDS + WAKE_CHECK_SECONDS + 3600).toBeLessThan(YEAR);
    expect((YEAR / WAKE_CHECK_SECONDS) * eventsOfTurn({ action: 'wait' })).toBeLessThan(DEFAULT_EVENT_BUDGET);
  });

  it('names continued executions after the job and counts them; a job id alone never reads as a continuation', () => {
    expect(executionName('u/admin/refund', id)).toBe(`u_admin_refund-${id}`);
    expect(executionName('u/admin/refund', id, 3)).toBe(`u_admin_refund-${id}.c3`);
    expect(continuationOf(executionName('u/admin/refund', id, 3))).toBe(3);
    expect(continuationOf(executionName('u/admin/refund', id))).toBe(0);
    const long = executionName(`f/${'very_long_folder_name/'.repeat(6)}flow`, id, 12);
    expect(long.length).toBeLessThanOrEqual(80);
    expect(long.endsWith(`-${id}.c12`)).toBe(true);
  });
});

describe('the action a turn hands the state machine', () => {
  const step = (n: number, kind: 'script' | 'flow' = 'flow') => ({ jobId: `${id.slice(0, -4)}${String(n).padStart(4, '0')}`, workspaceId: 'main', kind, path: `f/some_folder/a_long_flow_path_name/loop` });

  it('sends a lone script step on the RunScriptStep path, anything else through the Map', () => {
    expect(turnAction({ action: 'run', steps: [step(1, 'script')] }, WAKE_CHECK_SECONDS)).toEqual({ action: 'run_step', step: { jobId: step(1).jobId } });
    expect(turnAction({ action: 'run', steps: [step(1, 'flow')] }, WAKE_CHECK_SECONDS)).toMatchObject({ action: 'run', steps: [{ kind: 'flow' }] });
    expect(turnAction({ action: 'run', steps: [step(1, 'script'), step(2, 'script')] }, WAKE_CHECK_SECONDS)).toMatchObject({ action: 'run', steps: [{}, {}] });
  });

  it('keeps the state of a loop over 5,000 items far below 256 KB, a batch at a time', () => {
    const action = turnAction({ action: 'run', steps: Array.from({ length: 5_000 }, (_, i) => step(i)) }, WAKE_CHECK_SECONDS);
    expect(action.action === 'run' && action.steps).toHaveLength(MAP_BATCH);
    expect(Buffer.byteLength(JSON.stringify(action))).toBeLessThan(64 * 1024);
  });

  it('looks at a far deadline daily, and passes a near one as it is', () => {
    expect(turnAction({ action: 'wait', timeoutSeconds: 2 * YEAR }, WAKE_CHECK_SECONDS)).toEqual({ action: 'wait', timeoutSeconds: WAKE_CHECK_SECONDS });
    expect(turnAction({ action: 'wait', timeoutSeconds: 90 }, WAKE_CHECK_SECONDS)).toEqual({ action: 'wait', timeoutSeconds: 90 });
    expect(turnAction({ action: 'wait' }, WAKE_CHECK_SECONDS)).toEqual({ action: 'wait' });
  });
});
