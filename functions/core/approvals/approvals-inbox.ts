import { createHmac } from 'node:crypto';
import { getEntityValue } from '../store/entities.js';
import { Rights } from '../identity/permissions.js';
import { ruleGroups } from './approval-rules.js';
import { findModule, suspendSettings } from '../flows/definition.js';
import { approvalView, resumeUrls, type ApprovalView } from './resume.js';
import { approvalAudit, getFlowRun, type ApprovalAuditEntry, type FlowRun } from '../flows/run-state.js';
import { approvalsSoFar, gateRules, memberRefusal } from './approval-count.js';
import type { Principal } from '../identity/auth.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * What waits on a person (spec 6.3): every run at a ConsentGate they may decide, by the same rules
 * as the consent endpoint (consent.ts), and every suspended approval step they may resolve, by
 * the same rules as its resume URLs (resume.ts): the page never offers a decision the API refuses.
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
  audit: ApprovalAuditEntry[];
}

/** A suspended step the person may approve or cancel, with what its approval page would show. */
export interface WaitingStep {
  workspace: string;
  /** The flow job waiting at the step (a branch or iteration is a flow job of its own). */
  run_id: string;
  step_job: string;
  deadline: string | null;
  started_at: string | null;
  view: ApprovalView;
  /** Same-origin resume and cancel URLs signed for this person (cancel null when hidden). */
  resume_url: string;
  cancel_url: string | null;
  audit: ApprovalAuditEntry[];
}

export interface Inbox {
  gates: WaitingGate[];
  steps: WaitingStep[];
}

/** Running flow jobs looked at per workspace; enough for a team's inbox, oldest ones may fall out. */
const SCAN_LIMIT = 1000;

export async function inboxFor(deps: Pick<CoreDeps, 'store' | 'config'>, principal: Principal): Promise<Inbox> {
  const workspaces = principal.workspaceId ? [principal.workspaceId] : await workspacesOf(deps, principal);
  const inbox: Inbox = { gates: [], steps: [] };
  for (const ws of workspaces) {
    if (!principal.isSuperadmin && !(await getEntityValue(deps.store, 'member', ws, principal.username))) continue;
    const rights = await Rights.load(deps, principal, ws);
    for (const job of await deps.store.listJobs({ workspace_id: ws, status: 'running', kind: 'flow', limit: SCAN_LIMIT })) {
      if (job.kind !== 'flow') continue;
      const run = await getFlowRun(deps, ws, job.id);
      if (!run) continue;
      const gate = await waitingGate(deps, principal, job, run);
      if (gate) inbox.gates.push(gate);
      const step = await waitingStep(deps, principal, job, run, rights.canJob(job, 'read'));
      if (step) inbox.steps.push(step);
    }
  }
  return inbox;
}

/** A person's inbox covers their memberships (instance admins: every workspace). */
async function workspacesOf(deps: Pick<CoreDeps, 'store'>, principal: Principal): Promise<string[]> {
  const workspaces = principal.isSuperadmin ? await deps.store.listWorkspaces() : await deps.store.listMemberWorkspaces(principal.username);
  return workspaces.map((w) => w.id);
}

/** What one flow job waits on that this person may decide (the run page's approve / reject), by the inbox's rules. */
export async function waitingOnPerson(deps: Pick<CoreDeps, 'store' | 'config'>, principal: Principal, rights: Rights, job: Job): Promise<{ gate: WaitingGate | null; step: WaitingStep | null }> {
  const run = job.kind === 'flow' && job.status === 'running' ? await getFlowRun(deps, job.workspace_id, job.id) : null;
  if (!run) return { gate: null, step: null };
  return { gate: await waitingGate(deps, principal, job, run), step: await waitingStep(deps, principal, job, run, rights.canJob(job, 'read')) };
}

async function waitingGate(deps: Pick<CoreDeps, 'store'>, principal: Principal, job: Job, run: FlowRun): Promise<WaitingGate | null> {
  if (run.status !== 'awaiting_approval' || run.step?.kind !== 'gate') return null;
  const module = findModule(run.modules, run.step.module);
  const state = run.gates?.[run.step.module];
  if (module?.value.type !== 'consentgate' || !state || state.decision) return null;
  if (await memberRefusal(deps, job.workspace_id, gateRules(module.id, module.value, job.created_by), principal.username)) return null;
  return {
    workspace: job.workspace_id,
    run_id: job.id,
    flow_path: run.path,
    step_id: module.id,
    message: state.message,
    triggered_by: job.created_by,
    deadline: state.deadline,
    started_at: job.started_at,
    audit: approvalAudit(run)
      .filter((e) => e.step === module.id)
      .map(withoutWebhookPath),
  };
}

/**
 * Approvers need not be able to read the run: a webhook's URL (whose path may hold a secret, as
 * chat apps' incoming hooks do) is shown to them by its host only.
 */
function withoutWebhookPath(entry: ApprovalAuditEntry): ApprovalAuditEntry {
  if (!entry.via.startsWith('webhook') || !entry.who) return entry;
  try {
    return { ...entry, who: new URL(entry.who).host };
  } catch {
    return { ...entry, who: 'webhook' };
  }
}

async function waitingStep(deps: Pick<CoreDeps, 'store' | 'config'>, principal: Principal, job: Job, run: FlowRun, canReadRun: boolean): Promise<WaitingStep | null> {
  if (run.status !== 'suspended' || run.step?.kind !== 'suspend') return null;
  // A step asks whoever holds its URL: it is shown to people who may see the run, and to the
  // members of the groups it names (whom it asks in so many words).
  const settings = findModule(run.modules, run.step.module)?.suspend ?? suspendSettings.parse({});
  if (!canReadRun && ruleGroups(settings, run.step.groups).length === 0) return null;
  // Someone who approved it already (through any of its URLs, under their name) is not waited on.
  if (approvalsSoFar(run, run.step.resume_job).some((a) => a.approver === principal.username)) return null;
  const key = { workspaceId: job.workspace_id, stepJobId: run.step.resume_job, resumeId: personalResumeId(deps.config.signingKey, run.step.resume_job, principal.username), approver: principal.username, flowLevel: false };
  const urls = resumeUrls({ config: { ...deps.config, baseInternalUrl: '' } }, key);
  const signature = urls.resume.split('/').at(-1)!.split('?')[0];
  // The approval page's own view of this URL: its state and blockers are the resume API's rules.
  const view = await approvalView(deps, { ...key, signature, principal });
  if (view.state !== 'waiting' || view.blockedReason) return null;
  const step = run.step.module;
  return {
    workspace: job.workspace_id,
    run_id: job.id,
    step_job: run.step.resume_job,
    deadline: run.step.deadline,
    started_at: job.started_at,
    view,
    resume_url: urls.resume,
    cancel_url: view.hideCancel ? null : urls.cancel,
    audit: approvalAudit(run).filter((e) => e.step === step),
  };
}

/**
 * The resume id of the URL this page hands one person for one step: derived, not random, so the
 * page hands them the same URL every time and it counts once however often they reload.
 */
export function personalResumeId(signingKey: Uint8Array, stepJobId: string, username: string): number {
  const digest = createHmac('sha256', signingKey).update(`inbox\n${stepJobId}\n${username}`).digest();
  return digest.readUIntBE(0, 6);
}
