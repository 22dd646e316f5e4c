import { ApiError } from '../common/errors.js';
import { getEntityValue } from '../store/entities.js';
import type { SuspendSettings } from '../flows/definition.js';
import type { Approval, FlowRun, StepEvents } from '../flows/run-state.js';
import type { CoreDeps } from '../deps.js';

/**
 * Which approvals of a suspend step count (docs/approvals.md, "Who decides"): the one place that
 * decides it, for the resume and cancel URLs, the approval page, chat clicks, the inbox, the
 * run's status and the flow interpreter alike. approvalRefusal says whether one person's approval
 * counts under the step's rules; tallyApprovals applies it to what the step received and says
 * whether the step is approved, canceled or still waiting.
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

/** What is known of an approver when their approval is counted. */
export interface Standing {
  /** Approved with their login (session or personal token), not just holding the URL. */
  loggedIn: boolean;
  /** A member of the workspace (or an instance admin) at the time of counting. */
  member: boolean;
  /** In one of the step's groups (meaningless when it names none). */
  inGroup: boolean;
}

export type Refusal = 'login_required' | 'unknown_member' | 'self_approval_disabled' | 'not_in_group';

/** Why an approval by `username` does not count under `rules`, or null when it does. */
export function approvalRefusal(rules: StepRules, username: string, standing: Standing): Refusal | null {
  if (!rules.loginRequired) return null;
  if (!standing.loggedIn) return 'login_required';
  if (!standing.member) return 'unknown_member';
  if (rules.selfApprovalDisabled && username === rules.triggeredBy) return 'self_approval_disabled';
  if (rules.groups.length > 0 && !standing.inGroup) return 'not_in_group';
  return null;
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
    const known = standings.get(a.approver) ?? { member: false, inGroup: false };
    return approvalRefusal(rules, a.approver, { ...known, loggedIn: a.logged_in === true }) === null;
  });
  const counted = countOnce([...eligiblePre, ...own.approvals], rules.loginRequired);
  const cancel = own.cancel ?? pre.cancel ?? null;
  return { eligiblePre, counted, cancel, outcome: cancel ? 'canceled' : counted.length >= rules.required ? 'approved' : 'waiting' };
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
    standings.set(username, { member, inGroup: rules.groups.length > 0 && (await isInAnyGroup(deps, workspaceId, rules.groups, username)) });
  }
  return standings;
}

export async function isInAnyGroup(deps: Pick<CoreDeps, 'store'>, workspaceId: string, groups: readonly string[], username: string): Promise<boolean> {
  const members = await Promise.all(groups.map(async (g) => (await getEntityValue(deps.store, 'group', workspaceId, g))?.members ?? []));
  return members.some((m) => m.includes(username));
}

/**
 * The approvals a step job (or, under FLOW_LEVEL, the flow's pre-approvals) shows as received: its
 * own, plus for the step the flow waits at the pre-approvals its last tally accepted.
 */
export function approvalsReceived(run: FlowRun, key: string): number {
  const step = run.step;
  const pre = key !== FLOW_LEVEL && step?.kind === 'suspend' && step.resume_job === key ? (step.pre_approvals ?? 0) : 0;
  return (run.events[key]?.approvals.length ?? 0) + pre;
}

/** The approvals given so far that a new one under `key` is weighed against: the step's own and the flow's pre-approvals. */
export function approvalsSoFar(run: FlowRun, key: string): Approval[] {
  return [...(run.events[key]?.approvals ?? []), ...(key === FLOW_LEVEL ? [] : (run.events[FLOW_LEVEL]?.approvals ?? []))];
}

/** Whether an approval with this resume id was given, or used up by a step, already: a resume URL counts once. */
export function resumeIdUsed(run: FlowRun, resumeId: number): boolean {
  return Object.values(run.events).some((e) => e.approvals.some((a) => a.resume_id === resumeId)) || (run.consumed ?? []).includes(resumeId);
}

/** With a login required, whether `person` approved already under `key` (a person counts once). */
export function approvedAlready(run: FlowRun, key: string, person: string): boolean {
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
  }
}
