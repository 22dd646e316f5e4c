import { z } from 'zod';
import { createEntity, deleteEntity, listEntityValues, requireEntity, updateEntity } from '../store/entities.js';
import { requireUser } from './users.js';
import { USERNAME } from './username.js';
import { parseBody } from '../common/validation.js';
import { ROLES, type Member, type Rights, type Role } from './permissions.js';
import type { CoreDeps } from '../deps.js';

/** Workspace membership and roles. */

export const addMemberBody = z.strictObject({ username: USERNAME, role: z.enum(ROLES as [Role, ...Role[]]).default('developer') });
export const updateMemberBody = z.strictObject({ role: z.enum(ROLES as [Role, ...Role[]]) });
export const removeMemberBody = z.strictObject({ username: USERNAME });

export async function addMember(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, body: unknown): Promise<Member> {
  rights.check('workspaces', 'write');
  const input = parseBody(addMemberBody, body);
  await requireUser(deps, input.username);
  const member: Member = { username: input.username, role: input.role, added_by: rights.principal.username };
  await createEntity(deps.store, deps.clock, 'member', rights.workspaceId, input.username, member, `${input.username} as a member of ${rights.workspaceId}`);
  // An invitation still pending is spent: accepted later (say after a removal), it would bring its role back.
  await deps.store.deleteEntity('invite', rights.workspaceId, input.username);
  return member;
}

export async function updateMember(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, username: string, body: unknown): Promise<Member> {
  rights.check('workspaces', 'write');
  const input = parseBody(updateMemberBody, body);
  const e = await updateEntity(deps.store, deps.clock, 'member', rights.workspaceId, username, `member ${username}`, (m) => ({ ...m, role: input.role }));
  return e.value;
}

/**
 * Ends a membership, and with it every group of the workspace the member was in and any invitation
 * still pending: a group rule of
 * an approval step or a ConsentGate (`group:<name>`) must not go on naming someone who left, and
 * adding them back later does not restore old groups.
 */
export async function removeMember(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, body: unknown): Promise<void> {
  rights.check('workspaces', 'write');
  const input = parseBody(removeMemberBody, body);
  await requireEntity(deps.store, 'member', rights.workspaceId, input.username, `member ${input.username}`);
  // Groups first: a crash in between leaves a member without groups, never a non-member in one.
  for (const g of await listEntityValues(deps.store, 'group', rights.workspaceId)) {
    if (!g.value.members.includes(input.username)) continue;
    await updateEntity(deps.store, deps.clock, 'group', rights.workspaceId, g.key, `group ${g.key}`, (group) => ({ ...group, members: group.members.filter((m) => m !== input.username) }));
  }
  await deleteEntity(deps.store, 'member', rights.workspaceId, input.username, `member ${input.username}`);
  // Nor does an invitation still pending let them back in (with its role) once they are removed.
  await deps.store.deleteEntity('invite', rights.workspaceId, input.username);
}

export async function listMembers(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<Member[]> {
  rights.check('users', 'read');
  return (await listEntityValues(deps.store, 'member', rights.workspaceId)).map((e) => e.value);
}
