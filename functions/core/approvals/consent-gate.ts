import { findFlowVersion } from '../flows/flows.js';
import { renderGateMessage } from './gate-message.js';
import { failFlow } from '../flows/module-outcome.js';
import { gateRules, tallyGate } from './approval-count.js';
import { type FlowRun, type FlowStep, type GateDecision } from '../flows/run-state.js';
import type { ConsentGateValue, FlowModule } from '../flows/definition.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * ConsentGate nodes in the interpreter (spec 1.4, 2.7, 3, 7.7): reaching one renders its message
 * and makes the run `awaiting_approval`; a decision (stored by consent.ts) or the deadline settles
 * it. Approval goes on to the next node with `{ decision, approver, reason, at }` as the gate's
 * result (and `resume`); rejection or timeout fails the run with the same record.
 */

export async function startGate(deps: Pick<CoreDeps, 'store' | 'clock'>, flowJob: Job, run: FlowRun, module: FlowModule, gate: ConsentGateValue): Promise<void> {
  const version = await findFlowVersion(deps.store, flowJob.workspace_id, run.version);
  const message = renderGateMessage(gate.message, {
    workflowName: version?.summary || run.path,
    triggeredBy: flowJob.created_by,
    context: { ...run.flow_input, ...run.outer_results, ...run.results },
  });
  const now = deps.clock.now();
  const deadline = gate.timeout === undefined ? null : new Date(now.getTime() + gate.timeout * 1000).toISOString();
  // Notices are pending in the same write that makes the run wait, so none is lost to a crash.
  run.gates = { ...run.gates, [module.id]: { message, deadline, deliveries: [], notices: gate.notify.length > 0 ? 'pending' : 'done' } };
  run.step = { kind: 'gate', module: module.id, deadline };
  run.status = 'awaiting_approval';
}

/** Applies a decision or the deadline to the gate the run waits at; false while it keeps waiting. */
export function settleGate(run: FlowRun, current: Extract<FlowStep, { kind: 'gate' }>, module: FlowModule, gateValue: ConsentGateValue, triggeredBy: string, now: Date): boolean {
  const gate = run.gates?.[module.id];
  if (!gate) throw new Error(`flow ${run.flow_job}: gate ${module.id} has no state`);
  if (!gate.decision && current.deadline !== null && Date.parse(current.deadline) <= now.getTime()) {
    gate.decision = { decision: 'rejected', approver: null, reason: 'timeout', at: now.toISOString() };
  }
  // Counted as every approval is (approval-count.ts): the gate's one approval, or its rejection.
  const decision = gate.decision;
  if (!decision || tallyGate(gateRules(module.id, gateValue, triggeredBy), decision).outcome === 'waiting') return false;
  run.results[module.id] = decision;
  run.step = null;
  run.status = 'running';
  if (decision.decision === 'rejected') {
    // The flow's failure module, when it has one, runs first and gives the failed flow its result.
    failFlow(run, module.id, { error: rejection(module.id, decision), ...decision });
    return true;
  }
  run.previous_result = decision;
  run.resume = decision;
  run.resumes = [decision];
  run.approvers = decision.approver ? [decision.approver] : [];
  run.index += 1;
  return true;
}

function rejection(stepId: string, d: GateDecision): { name: string; message: string; step_id: string } {
  if (d.approver === null) return { name: 'ConsentTimeout', message: `consent gate ${stepId} timed out with no decision`, step_id: stepId };
  return { name: 'ConsentRejected', message: `consent gate ${stepId} was rejected by ${d.approver}: ${d.reason}`, step_id: stepId };
}
