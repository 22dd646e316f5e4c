import { ApiError } from '../common/errors.js';
import { getEntityValue } from '../store/entities.js';
import type { ConsentGateValue, SuspendSettings } from '../flows/definition.js';
import type { Approval, FlowRun, FlowRunDocument, GateDecision, StepEvents } from '../flows/flow-documents.js';
import type { CoreDeps } from '../deps.js';

/**
 * Which approvals count (docs/approvals.md, "Who decides"): the one place that decides it, for a
 * suspend step's resume and cancel URLs, the approval page, chat clicks, the inbox, the run's
 * status and the flow interpreter, and for a ConsentGate's decision alike (the consent endpoint,
 * chat, the inbox, the interpreter). A gate is an approval of one required decision, by a person,
 * among the approvers it names (gateRules). approvalRefusal says whether one person's approval
 * counts under the rules; tallyApprovals applies it to what was received and says whether the
 * step is approved, canceled (rejected) or still waiting.
 */

/** Where a flow's pre-approvals wait (spec 3), beside the events of each step job. */
export const FLOW_LEVEL = '*flow';

/** The rules of one suspend step, as they stand when an approval is given or counted. */
export interface StepRules {
  /** `required_events`: how many approvals resume the step. */
  required: number;
  /** Only logged-in people count: a login, self-approval or group rule implies it. */
  loginRequired: boolean;
  /** The user who triggered the flow. */
  triggeredBy: string;
  /** `self_approval_disabled`: the user who triggered the flow may not approve it. */
  selfApprovalDisabled: boolean;
  /** `user_groups_required` as it stands: an approver must be in one of them; empty when anyone may. */
  groups: readonly string[];
  /** A ConsentGate: its `approvers` (usernames, `role:<role>`, `group:<name>`); only they decide. */
  gate?: { module: string; approvers: readonly string[] };
}

export function stepRules(settings: SuspendSettings, groups: readonly string[], triggeredBy: string): StepRules {
  return {
    required: settings.required_events,
    loginRequired: settings.user_auth_required || settings.self_approval_disabled || groups.length > 0,
    triggeredBy,
    selfApprovalDisabled: settings.self_approval_disabled,
    groups,
  };
}

/**
 * A ConsentGate's rules: one decision, by a logged-in member among its approvers, and not by the
 * user who triggered the run unless `self_approval` allows it.
 */
export function gateRules(module: string, gate: Pick<ConsentGateValue, 'approvers' | 'self_approval'>, triggeredBy: string): StepRules {
  return { required: 1, loginRequired: true, triggeredBy, selfApprovalDisabled: !gate.self_approval, groups: [], gate: { module, approvers: gate.approvers } };
}

/** What is known of an approver when their approval is counted. */
export interface Standing {
  /** Approved with their login (session or personal token), not just holding the URL. */
  loggedIn: boolean;
  /** A member of the workspace (or an instance admin) at the time of counting. */
  member: boolean;
  /** Among those the rules name: in one of the step's groups, or one of the gate's approvers (meaningless when they name none). */
  listed: boolean;
}

export type Refusal = 'login_required' | 'unknown_member' | 'self_approval_disabled' | 'not_in_group' | 'not_an_approver';

/** Why an approval (or a gate's decision) by `username` does not count under `rules`, or null when it does. */
export function approvalRefusal(rules: StepRules, username: string, standing: Standing): Refusal | null {
  if (!rules.loginRequired) return null;
  if (!standing.loggedIn) return 'login_required';
  if (!standing.member) return 'unknown_member';
  // A gate names who decides: someone it does not name is told that first.
  if (rules.gate && !standing.listed) return 'not_an_approver';
  if (rules.selfApprovalDisabled && username === rules.triggeredBy) return 'self_approval_disabled';
  if (rules.groups.length > 0 && !standing.listed) return 'not_in_group';
  return null;
}

/** Whether `username` is among those the rules name (read only where it matters: a gate, or a step with groups). */
export async function isListed(deps: Pick<CoreDeps, 'store'>, workspaceId: string, rules: StepRules, username: string): Promise<boolean> {
  if (rules.gate) return isNamedApprover(deps, workspaceId, rules.gate.approvers, username);
  return rules.groups.length > 0 && isInAnyGroup(deps, workspaceId, rules.groups, username);
}

/** Why `username`, a logged-in member (personBlocker checked it), may not approve or decide under `rules`, or null. */
export async function memberRefusal(deps: Pick<CoreDeps, 'store'>, workspaceId: string, rules: StepRules, username: string): Promise<Refusal | null> {
  return approvalRefusal(rules, username, { loggedIn: true, member: true, listed: await isListed(deps, workspaceId, rules, username) });
}

export interface Tally {
  /** The pre-approvals the step's rules accept; used up when the step resumes. */
  eligiblePre: Approval[];
  /** The approvals that count: the accepted pre-approvals, then the step's own; with a login required, a person once. */
  counted: Approval[];
  /** A cancel (a rejection) of the step, or of the flow's pre-approvals: it ends the wait whatever the count. */
  cancel: StepEvents['cancel'] | null;
  outcome: 'canceled' | 'approved' | 'waiting';
}

/**
 * What a step's approvals come to. Its own approvals were held to its rules when they were given
 * (approvalBlocker); pre-approvals, given before the flow reached it, are held to them now.
 * `standings` holds each pre-approver's standing (approverStandings loads it).
 */
export function tallyApprovals(rules: StepRules, own: StepEvents, pre: StepEvents, standings: ReadonlyMap<string, Omit<Standing, 'loggedIn'>>): Tally {
  const eligiblePre = pre.approvals.filter((a) => {
    const known = standings.get(a.approver) ?? { member: false, listed: false };
    return approvalRefusal(rules, a.approver, { ...known, loggedIn: a.logged_in === true }) === null;
  });
  const counted = countOnce([...eligiblePre, ...own.approvals], rules.loginRequired);
  const cancel = own.cancel ?? pre.cancel ?? null;
  return { eligiblePre, counted, cancel, outcome: cancel ? 'canceled' : counted.length >= rules.required ? 'approved' : 'waiting' };
}

const NO_EVENTS: StepEvents = { approvals: [] };

/**
 * What a ConsentGate's decision comes to, counted as a step's approvals are: an approval that was
 * held to the gate's rules when it was given (consentDecider), or its rejection (by an approver,
 * or by the deadline: approver null), which ends the wait as a step's cancel does.
 */
export function tallyGate(rules: StepRules, decision: GateDecision | undefined): Tally {
  const by = decision?.approver ?? 'timeout';
  const own: StepEvents =
    decision?.decision === 'approved'
      ? // A decision has no resume URL: resume_id 0 names none.
        { approvals: [{ resume_id: 0, approver: by, payload: decision, at: decision.at, logged_in: decision.approver !== null }] }
      : decision
        ? { approvals: [], cancel: { by, reason: decision.reason, at: decision.at } }
        : NO_EVENTS;
  return tallyApprovals(rules, own, NO_EVENTS, new Map());
}

/** With a login required, a person counts once however many URLs they used. */
function countOnce(approvals: Approval[], loginRequired: boolean): Approval[] {
  if (!loginRequired) return approvals;
  const seen = new Set<string>();
  return approvals.filter((a) => !seen.has(a.approver) && seen.add(a.approver));
}

/** The standing of each of `usernames` in the workspace, for tallyApprovals (nothing is read when no login is required). */
export async function approverStandings(deps: Pick<CoreDeps, 'store'>, workspaceId: string, rules: StepRules, usernames: readonly string[]): Promise<Map<string, Omit<Standing, 'loggedIn'>>> {
  const standings = new Map<string, Omit<Standing, 'loggedIn'>>();
  if (!rules.loginRequired) return standings;
  for (const username of new Set(usernames)) {
    // A member removed since keeps no standing approval; an instance admin needs no membership.
    const member = !!(await getEntityValue(deps.store, 'member', workspaceId, username)) || !!(await deps.store.getUser(username))?.is_admin;
    standings.set(username, { member, listed: await isListed(deps, workspaceId, rules, username) });
  }
  return standings;
}

/**
 * Whether a person is one of a ConsentGate's approvers: named, holding the role in the workspace,
 * or in the group.
 */
export async function isNamedApprover(deps: Pick<CoreDeps, 'store'>, workspaceId: string, approvers: readonly string[], username: string): Promise<boolean> {
  if (approvers.includes(username)) return true;
  const roles = approvers.filter((a) => a.startsWith('role:')).map((a) => a.slice('role:'.length));
  if (roles.length > 0) {
    const member = await getEntityValue(deps.store, 'member', workspaceId, username);
    if (member && roles.includes(member.role)) return true;
  }
  const groups = approvers.filter((a) => a.startsWith('group:')).map((a) => a.slice('group:'.length));
  return groups.length > 0 && isInAnyGroup(deps, workspaceId, groups, username);
}

export async function isInAnyGroup(deps: Pick<CoreDeps, 'store'>, workspaceId: string, groups: readonly string[], username: string): Promise<boolean> {
  const members = await Promise.all(groups.map(async (g) => (await getEntityValue(deps.store, 'group', workspaceId, g))?.members ?? []));
  return members.some((m) => m.includes(username));
}

/**
 * The approvals a step job (or, under FLOW_LEVEL, the flow's pre-approvals) shows as received: its
 * own, plus for the step the flow waits at the pre-approvals its last tally accepted.
 */
export function approvalsReceived(run: FlowRunDocument, key: string): number {
  const step = run.step;
  const pre = key !== FLOW_LEVEL && step?.kind === 'suspend' && step.resume_job === key ? (step.pre_approvals ?? 0) : 0;
  return (run.events[key]?.approvals.length ?? 0) + pre;
}

/** The approvals given so far that a new one under `key` is weighed against: the step's own and the flow's pre-approvals. */
export function approvalsSoFar(run: FlowRunDocument, key: string): Approval[] {
  return [...(run.events[key]?.approvals ?? []), ...(key === FLOW_LEVEL ? [] : (run.events[FLOW_LEVEL]?.approvals ?? []))];
}

/** Whether an approval with this resume id was given, or used up by a step, already: a resume URL counts once. */
export function resumeIdUsed(run: FlowRunDocument, resumeId: number): boolean {
  return Object.values(run.events).some((e) => e.approvals.some((a) => a.resume_id === resumeId)) || (run.consumed ?? []).includes(resumeId);
}

/** With a login required, whether `person` approved already under `key` (a person counts once). */
export function approvedAlready(run: FlowRunDocument, key: string, person: string): boolean {
  return approvalsSoFar(run, key).some((a) => a.logged_in && a.approver === person);
}

/** The 4xx a refused approver gets, the same whichever channel they used. */
export function refusalError(refusal: Refusal, rules: StepRules, username: string, workspaceId: string): ApiError {
  switch (refusal) {
    case 'login_required':
      return new ApiError(401, 'login_required', 'log in to approve this step');
    case 'unknown_member':
      return new ApiError(403, 'unknown_member', `${username} is not a member of workspace ${workspaceId}, so may not approve in it`);
    case 'self_approval_disabled':
      return new ApiError(403, 'self_approval_disabled', 'the user who triggered the flow may not approve it');
    case 'not_in_group':
      return new ApiError(403, 'not_in_group', `only members of ${rules.groups.join(', ')} may approve this step`);
    case 'not_an_approver':
      return new ApiError(403, 'not_an_approver', `${username} is not an approver of consent gate ${rules.gate?.module ?? ''}`);
  }
}
