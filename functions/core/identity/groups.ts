import { z } from 'zod';
import { badRequest, conflict } from '../common/errors.js';
import { createEntity, deleteEntity, getEntityValue, listEntityValues, requireEntity, updateEntity } from '../store/entities.js';
import { parseBody } from '../common/validation.js';
import { USERNAME } from './username.js';
import { ALL_GROUP, type Group, type Member, type Rights } from './permissions.js';
import type { CoreDeps } from '../deps.js';

/** Groups of workspace members; folder rights may name a group as `g/<name>`. */

export const NAME = z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_-]{0,49}$/, 'letters, digits, _ and - (at most 50)');

export const createGroupBody = z.strictObject({ name: NAME, summary: z.string().max(1000).default('') });
export const memberBody = z.strictObject({ username: USERNAME });

const what = (name: string) => `group ${name}`;

export async function createGroup(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, body: unknown): Promise<Group> {
  rights.check('groups', 'write', null);
  const input = parseBody(createGroupBody, body);
  if (input.name === ALL_GROUP) throw conflict(`group ${ALL_GROUP} exists implicitly and holds every member`);
  const group: Group = { name: input.name, summary: input.summary, members: [] };
  return (await createEntity(deps.store, deps.clock, 'group', rights.workspaceId, input.name, group, what(input.name))).value;
}

export async function addGroupMember(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, name: string, body: unknown): Promise<Group> {
  rights.check('groups', 'write', name);
  const { username } = parseBody(memberBody, body);
  if (!(await getEntityValue(deps.store, 'member', rights.workspaceId, username))) {
    throw badRequest('unknown_member', `username: ${username} is not a member of workspace ${rights.workspaceId}`, { field: 'username' });
  }
  const e = await updateEntity(deps.store, deps.clock, 'group', rights.workspaceId, name, what(name), (g) => ({
    ...g,
    members: g.members.includes(username) ? g.members : [...g.members, username].sort(),
  }));
  return e.value;
}

export async function removeGroupMember(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, name: string, body: unknown): Promise<Group> {
  rights.check('groups', 'write', name);
  const { username } = parseBody(memberBody, body);
  const e = await updateEntity(deps.store, deps.clock, 'group', rights.workspaceId, name, what(name), (g) => ({
    ...g,
    members: g.members.filter((m) => m !== username),
  }));
  return e.value;
}

export async function getGroup(deps: Pick<CoreDeps, 'store'>, rights: Rights, name: string): Promise<Group> {
  rights.check('groups', 'read', name);
  return (await requireEntity(deps.store, 'group', rights.workspaceId, name, what(name))).value;
}

export async function listGroups(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<Group[]> {
  rights.check('groups', 'read');
  return (await listEntityValues(deps.store, 'group', rights.workspaceId)).map((e) => e.value).filter((g) => rights.can('groups', 'read', g.name));
}

export async function deleteGroup(deps: Pick<CoreDeps, 'store'>, rights: Rights, name: string): Promise<void> {
  rights.check('groups', 'write', name);
  await deleteEntity(deps.store, 'group', rights.workspaceId, name, what(name));
}
