import { z } from 'zod';
import { badRequest, conflict, notFound } from '../common/errors.js';
import { requireFullIdentity, type Principal } from './auth.js';
import { createEntity, deleteEntity, getEntityValue, listEntityValues, tryCreateEntity, typed } from '../store/entities.js';
import { instanceAnnouncer } from '../events/announce.js';
import { parseBody } from '../common/validation.js';
import { USERNAME } from './username.js';
import { ROLES, type Member, type Rights, type Role } from './permissions.js';
import type { CoreDeps } from '../deps.js';
import type { Invite } from './identity-documents.js';

/**
 * Workspace invitations (spec 6.2's "user invited to a workspace" and "user joined a workspace"):
 * a workspace admin invites an existing user, who sees the pending invitation and accepts it (then
 * becomes a member with the invited role) or declines it. Each step is an instance event.
 */

export const inviteBody = z
  .object({ username: USERNAME.optional(), email: z.string().min(1).max(320).optional(), role: z.enum(ROLES as [Role, ...Role[]]).default('developer') })
  .strict()
  .refine((b) => (b.username === undefined) !== (b.email === undefined), 'give the username or the email of the user to invite, one of them');
export const usernameBody = z.strictObject({ username: USERNAME });
export const workspaceBody = z.strictObject({ workspace_id: z.string().min(1).max(50) });

type Deps = Pick<CoreDeps, 'store' | 'clock' | 'config'>;

export async function inviteUser(deps: Deps, rights: Rights, body: unknown): Promise<Invite> {
  rights.check('workspaces', 'write');
  const input = parseBody(inviteBody, body);
  const users = await deps.store.listUsers();
  const user = users.find((u) => (input.username !== undefined ? u.username === input.username : u.email.toLowerCase() === input.email!.toLowerCase()));
  if (!user) throw badRequest('unknown_user', input.username !== undefined ? `username: no user ${input.username}` : `email: no user with email ${input.email}`, { field: input.username !== undefined ? 'username' : 'email' });
  if (await deps.store.getEntity('member', rights.workspaceId, user.username)) throw conflict(`${user.username} is already a member of ${rights.workspaceId}`);
  const invite: Invite = { username: user.username, role: input.role, invited_by: rights.principal.username, invited_at: deps.clock.now().toISOString() };
  const announce = await instanceAnnouncer(deps, rights.principal.username);
  await createEntity(deps.store, deps.clock, 'invite', rights.workspaceId, user.username, invite, `an invitation of ${user.username} to ${rights.workspaceId}`, () =>
    announce('UserInvited', { kind: 'user', path: user.username, extra: { workspace: rights.workspaceId, role: invite.role } }),
  );
  return invite;
}

export async function listWorkspaceInvites(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<Invite[]> {
  rights.check('workspaces', 'write');
  return (await listEntityValues(deps.store, 'invite', rights.workspaceId)).map((e) => e.value);
}

export async function cancelInvite(deps: Pick<CoreDeps, 'store'>, rights: Rights, body: unknown): Promise<void> {
  rights.check('workspaces', 'write');
  const { username } = parseBody(usernameBody, body);
  await deleteEntity(deps.store, 'invite', rights.workspaceId, username, `an invitation of ${username}`);
}

/** The caller's pending invitations, in every workspace. */
export async function listMyInvites(deps: Pick<CoreDeps, 'store'>, principal: Principal): Promise<Array<Invite & { workspace_id: string }>> {
  requireFullIdentity(principal, 'listing invitations');
  // Read by the person's own invitations, never by a look in every workspace of the instance.
  return (await deps.store.listInvitesOf(principal.username)).map((e) => ({ ...typed('invite', e).value, workspace_id: e.workspace_id }));
}

/**
 * Joins the workspace with the invited role. The membership (with its event) is written first and
 * the invitation removed after: a crash in between leaves an invitation that accepting again clears.
 */
export async function acceptInvite(deps: Deps, principal: Principal, body: unknown): Promise<Member> {
  requireFullIdentity(principal, 'accepting invitations');
  const { workspace_id } = parseBody(workspaceBody, body);
  const invite = await getEntityValue(deps.store, 'invite', workspace_id, principal.username);
  if (!invite) throw notFound(`an invitation of ${principal.username} to ${workspace_id}`);
  const member: Member = { username: principal.username, role: invite.role, added_by: invite.invited_by };
  const announce = await instanceAnnouncer(deps, principal.username);
  await tryCreateEntity(deps.store, deps.clock, 'member', workspace_id, principal.username, member, () =>
    announce('UserJoinedWorkspace', { kind: 'user', path: principal.username, extra: { workspace: workspace_id, role: invite.role, invited_by: invite.invited_by } }),
  );
  await deps.store.deleteEntity('invite', workspace_id, principal.username);
  return (await getEntityValue(deps.store, 'member', workspace_id, principal.username)) ?? member;
}

export async function declineInvite(deps: Pick<CoreDeps, 'store'>, principal: Principal, body: unknown): Promise<void> {
  requireFullIdentity(principal, 'declining invitations');
  const { workspace_id } = parseBody(workspaceBody, body);
  await deleteEntity(deps.store, 'invite', workspace_id, principal.username, `an invitation of ${principal.username} to ${workspace_id}`);
}
