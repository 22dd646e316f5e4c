import { ApiError } from '../common/errors.js';
import { getEntityValue, listEntityValues } from '../store/entities.js';
import type { Principal } from '../identity/auth.js';
import type { SuspendSettings } from '../flows/definition.js';
import type { CoreDeps } from '../deps.js';

/**
 * Who counts as a person deciding, whether through a suspend step's resume URL, the ConsentGate
 * endpoint, chat or a page (docs/approvals.md, "Who decides"); the groups a step requires; whom a
 * gate's notices go to. Whose approval or decision counts under a step's or a gate's rules is
 * decided in approval-count.ts.
 */

/**
 * The one identity rule of every approval channel (approval page, resume and cancel URLs, consent
 * endpoint, chat callbacks): a decision counts as a person only when it is made with their login
 * session, a personal API token without scopes valid for the workspace (an expired one is already
 * refused by authenticate), or a chat identity verified with keys an admin configured. A job token
 * acts for a job (a script anyone wrote could otherwise approve as whoever runs it), a scoped token
 * for the work it was narrowed to; neither is a person deciding. A removed member decides nothing.
 */
export async function personBlocker(deps: Pick<CoreDeps, 'store'>, principal: Principal, workspaceId: string): Promise<ApiError | null> {
  const kind = tokenKindBlocker(principal);
  if (kind) return kind;
  if (principal.workspaceId !== null && principal.workspaceId !== workspaceId) {
    return new ApiError(403, 'not_a_person', `this token is limited to workspace ${principal.workspaceId}, not ${workspaceId}: approving needs a login session or a token valid for the workspace`);
  }
  if (!principal.isSuperadmin && !(await getEntityValue(deps.store, 'member', workspaceId, principal.username))) {
    return new ApiError(403, 'unknown_member', `${principal.username} is not a member of workspace ${workspaceId}, so may not approve in it`);
  }
  return null;
}

/** The part of personBlocker that needs no workspace: the kind of credential (checked before anything is looked up). */
export function tokenKindBlocker(principal: Principal): ApiError | null {
  if (principal.via === 'job') {
    return new ApiError(403, 'not_a_person', "a job token (OV_TOKEN) acts for a job, not a person: approving needs your login session or a personal API token without scopes");
  }
  if (principal.scopes !== null) {
    return new ApiError(403, 'not_a_person', 'a token with scopes is narrowed to other work: approving needs your login session or a personal API token without scopes');
  }
  return null;
}

/** personBlocker, thrown. */
export async function assertPerson(deps: Pick<CoreDeps, 'store'>, principal: Principal, workspaceId: string): Promise<void> {
  const blocker = await personBlocker(deps, principal, workspaceId);
  if (blocker) throw blocker;
}

/** The groups a suspend step requires: its static value, or what its expression gave (unknown until evaluated). */
export function ruleGroups(settings: SuspendSettings, evaluated: string[] | undefined): string[] {
  const required = settings.user_groups_required;
  if (!required) return [];
  if (required.type === 'static') return staticGroups(required.value);
  return evaluated ?? ['(not yet known)'];
}

/** A static `user_groups_required`: a list of group names, or one name. */
function staticGroups(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value.map(String) : [String(value)];
}

/** The usernames a ConsentGate's approvers stand for, to notify them. */
export async function approverUsernames(deps: Pick<CoreDeps, 'store'>, workspaceId: string, approvers: readonly string[]): Promise<string[]> {
  const names = new Set(approvers.filter((a) => !a.includes(':')));
  const roles = approvers.filter((a) => a.startsWith('role:')).map((a) => a.slice('role:'.length));
  if (roles.length > 0) {
    for (const e of await listEntityValues(deps.store, 'member', workspaceId)) if (roles.includes(e.value.role)) names.add(e.value.username);
  }
  for (const g of approvers.filter((a) => a.startsWith('group:'))) {
    for (const m of (await getEntityValue(deps.store, 'group', workspaceId, g.slice('group:'.length)))?.members ?? []) names.add(m);
  }
  return [...names].sort();
}
