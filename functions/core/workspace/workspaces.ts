import { z } from 'zod';
import { conflict, notFound } from '../common/errors.js';
import { assertWorkspaceId } from '../common/paths.js';
import { parseBody } from '../common/validation.js';
import { tryCreateEntity } from '../store/entities.js';
import { isRoutePrefix } from '../triggers/route-prefix.js';
import { requireInstanceAdmin, type Principal } from '../identity/auth.js';
import type { Member, Rights } from '../identity/permissions.js';
import type { Clock, Store, Workspace } from '../../ports.js';

export const createWorkspaceBody = z.strictObject({
  id: z.string(),
  name: z.string().min(1).max(200),
});

export async function createWorkspace(store: Store, clock: Clock, principal: Principal, body: unknown): Promise<Workspace> {
  requireInstanceAdmin(principal, 'create workspaces');
  const input = parseBody(createWorkspaceBody, body);
  assertWorkspaceId(input.id);
  // The id becomes the first segment of the workspace's route URLs, which a prefix may already name.
  if (await isRoutePrefix(store, input.id)) throw conflict(`${input.id} is taken as the route prefix of another workspace`);
  const ws: Workspace = { id: input.id, name: input.name, created_at: clock.now().toISOString(), object_storage_enabled: false };
  if ((await store.createWorkspace(ws)) === 'exists') throw conflict(`workspace ${input.id} already exists`);
  await addCreatorAsAdmin(store, clock, ws.id, principal.username);
  return ws;
}

/** Whoever creates a workspace administers it. */
export async function addCreatorAsAdmin(store: Store, clock: Clock, workspaceId: string, username: string): Promise<void> {
  const member: Member = { username, role: 'admin', added_by: username };
  await tryCreateEntity(store, clock, 'member', workspaceId, username, member);
}

/**
 * Workspaces the caller belongs to (instance admins: all), within the one their token is limited
 * to. A person's are read by their memberships, never by a look in every workspace of the instance.
 */
export async function listWorkspacesOf(store: Store, principal: Principal): Promise<Workspace[]> {
  const only = principal.workspaceId;
  if (principal.isSuperadmin) {
    if (only === null) return store.listWorkspaces();
    const ws = await store.getWorkspace(only);
    return ws ? [ws] : [];
  }
  const mine = await store.listMemberWorkspaces(principal.username);
  return only === null ? mine : mine.filter((w) => w.id === only);
}

export async function requireWorkspace(store: Store, id: string): Promise<Workspace> {
  const ws = await store.getWorkspace(id);
  if (!ws) throw notFound(`workspace ${id}`);
  return ws;
}

/**
 * For the routes whose callers prove their right themselves (signed resume, cancel and upload
 * URLs, chat callbacks), before anything says who they are: a workspace that does not exist
 * stands in as an empty one, so the route refuses a bad proof exactly as in a workspace that
 * exists, and an outsider cannot tell which workspaces do from a 404.
 */
export async function workspaceOrStandIn(store: Store, id: string): Promise<Workspace> {
  return (await store.getWorkspace(id)) ?? { id, name: id, created_at: new Date(0).toISOString(), object_storage_enabled: false };
}

export const objectStorageBody = z.strictObject({ enabled: z.boolean() });

export async function setObjectStorage(store: Store, rights: Rights, body: unknown): Promise<Workspace> {
  rights.check('workspaces', 'write');
  const input = parseBody(objectStorageBody, body);
  const id = rights.workspaceId;
  await requireWorkspace(store, id);
  await store.setObjectStorage(id, input.enabled);
  return requireWorkspace(store, id);
}
