import { describe, expect, it } from 'vitest';
import { approvalState } from '../../functions/core/approvals/resume.js';
import { newRun } from '../../functions/core/flows/flow-run-document.js';
import type { FlowRun } from '../../functions/core/flows/run-state.js';

/** The approval page's state comes from what the run recorded, never from reading error text. */

function finishedRun(overrides: Partial<FlowRun>): FlowRun {
  return { ...newRun('flow-job', 7, 'f/ops/deploy', [], {}, {}), status: 'finished', ...overrides };
}

describe('approval state', () => {
  it('is timed_out for the step whose approval timeout passed', () => {
    const run = finishedRun({
      events: { 'step-1': { approvals: [], timed_out: true } },
      outcome: { status: 'canceled', result: { error: { name: 'SuspendTimeout', message: 'approval step ask timed out' } } },
    });
    expect(approvalState(run, 'step-1', 1)).toBe('timed_out');
  });

  it('is not timed_out because a result happens to mention SuspendTimeout', () => {
    const run = finishedRun({
      events: { 'step-1': { approvals: [] } },
      outcome: { status: 'failed', result: { error: { name: 'Error', message: 'grep SuspendTimeout found nothing' } } },
    });
    expect(approvalState(run, 'step-1', 1)).toBe('finished');
  });

  it('is timed_out for that step only, not for another step of the same flow', () => {
    const run = finishedRun({ events: { 'step-1': { approvals: [], timed_out: true }, 'step-2': { approvals: [] } } });
    expect(approvalState(run, 'step-2', 1)).toBe('finished');
  });
});
