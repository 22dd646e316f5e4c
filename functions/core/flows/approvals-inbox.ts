import { getEntityValue } from '../entities.js';
import { isNamedApprover, selfApprovalBlocker } from './approval-rules.js';
import { findModule } from './definition.js';
import { getFlowRun } from './run-state.js';
import type { Principal } from '../auth.js';
import type { CoreDeps } from '../deps.js';

/**
 * What waits on a person (spec 6.3): every run at a ConsentGate they may decide, by the same rules
 * as the consent endpoint (consent.ts), so the page never offers a decision the endpoint refuses.
 */

export interface WaitingGate {
  workspace: string;
  run_id: string;
  flow_path: string;
  step_id: string;
  message: string;
  triggered_by: string;
  deadline: string | null;
  started_at: string | null;
}

/** Running flow jobs looked at per workspace; enough for a team's inbox, oldest ones may fall out. */
const SCAN_LIMIT = 1000;

export async function waitingGatesFor(deps: Pick<CoreDeps, 'store'>, principal: Principal): Promise<WaitingGate[]> {
  const workspaces = principal.workspaceId ? [principal.workspaceId] : (await deps.store.listWorkspaces()).map((w) => w.id);
  const waiting: WaitingGate[] = [];
  for (const ws of workspaces) {
    if (!principal.isSuperadmin && !(await getEntityValue(deps.store, 'member', ws, principal.username))) continue;
    for (const job of await deps.store.listJobs({ workspace_id: ws, status: 'running', limit: SCAN_LIMIT })) {
      if (job.kind !== 'flow') continue;
      const run = await getFlowRun(deps, ws, job.id);
      if (run?.status !== 'awaiting_approval' || run.step?.kind !== 'gate') continue;
      const module = findModule(run.modules, run.step.module);
      const state = run.gates?.[run.step.module];
      if (module?.value.type !== 'consentgate' || !state || state.decision) continue;
      if (!(await isNamedApprover(deps, ws, module.value.approvers, principal.username))) continue;
      if (selfApprovalBlocker(principal, job.created_by, module.value.self_approval)) continue;
      waiting.push({ workspace: ws, run_id: job.id, flow_path: run.path, step_id: module.id, message: state.message, triggered_by: job.created_by, deadline: state.deadline, started_at: job.started_at });
    }
  }
  return waiting;
}
