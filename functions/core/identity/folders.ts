import { z } from 'zod';
import { createEntity, deleteEntity, listEntityValues, requireEntity, updateEntity } from '../store/entities.js';
import { NAME } from './groups.js';
import { parseBody } from '../common/validation.js';
import { withoutWindmillDefaults } from '../common/windmill-only-fields.js';
import { ApiError, conflict, notFound } from '../common/errors.js';
import type { Folder, Rights } from './permissions.js';
import type { CoreDeps } from '../deps.js';
import { workspaceAnnouncer } from '../events/announce.js';

type Deps = Pick<CoreDeps, 'store' | 'clock' | 'config'>;

/** Folders: `f/<folder>/...` items follow their folder's owners and extra_perms (see permissions.ts). */

const principalRef = z.string().regex(/^[ug]\/[A-Za-z0-9_][A-Za-z0-9_.-]{0,49}$/, 'u/<username> or g/<group>');

export const createFolderBody = z.strictObject({
  name: NAME,
  summary: z.string().max(1000).default(''),
  owners: z.array(principalRef).max(100).optional(),
  extra_perms: z.record(principalRef, z.boolean()).default({}),
});

export const updateFolderBody = z.strictObject({
  summary: z.string().max(1000).optional(),
  owners: z.array(principalRef).max(100).optional(),
  extra_perms: z.record(principalRef, z.boolean()).optional(),
});

const what = (name: string) => `folder ${name}`;
/** A folder's path, as its items' paths start: the subject of its events. */
const folderPath = (name: string) => `f/${name}`;

export async function createFolder(deps: Deps, rights: Rights, body: unknown): Promise<Folder> {
  const input = parseBody(createFolderBody, withoutWindmillDefaults('folder', body));
  rights.check('folders', 'write', input.name);
  const admin = rights.role === 'admin' || rights.role === 'instance_admin';
  if (!admin && !(await deps.store.getEntity('folder', rights.workspaceId, input.name)) && (await keepsHistory(deps.store, rights.workspaceId, input.name))) {
    throw new ApiError(403, 'forbidden', `${what(input.name)} held items before, whose runs, versions or items are still kept: only a workspace admin may create it again, since its owners read them all`);
  }
  const me = `u/${rights.principal.username}`;
  const folder: Folder = {
    name: input.name,
    summary: input.summary,
    // The creator owns the folder unless they hand it to others explicitly.
    owners: input.owners ?? [me],
    extra_perms: input.extra_perms,
    created_by: rights.principal.username,
  };
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  return (await createEntity(deps.store, deps.clock, 'folder', rights.workspaceId, input.name, folder, what(input.name), (e) => announce('CreateFolder', { kind: 'folder', path: folderPath(e.key), version: e.version }))).value;
}

export async function updateFolder(deps: Deps, rights: Rights, name: string, body: unknown): Promise<Folder> {
  rights.check('folders', 'write', name);
  const input = parseBody(updateFolderBody, withoutWindmillDefaults('folder', body));
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  const e = await updateEntity(deps.store, deps.clock, 'folder', rights.workspaceId, name, what(name), (f) => ({
    ...f,
    summary: input.summary ?? f.summary,
    owners: input.owners ?? f.owners,
    extra_perms: input.extra_perms ?? f.extra_perms,
  }), (next) => announce('UpdateFolder', { kind: 'folder', path: folderPath(next.key), version: next.version }));
  return e.value;
}

export async function getFolder(deps: Pick<CoreDeps, 'store'>, rights: Rights, name: string): Promise<Folder> {
  // One with no right on it is told what one is told of a folder that does not exist.
  if (!rights.can('folders', 'read', name)) throw notFound(what(name));
  return (await requireEntity(deps.store, 'folder', rights.workspaceId, name, what(name))).value;
}

export async function listFolders(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<Folder[]> {
  rights.check('folders', 'read');
  return (await listEntityValues(deps.store, 'folder', rights.workspaceId)).map((e) => e.value).filter((f) => rights.can('folders', 'read', f.name));
}

/** The kinds of item that live at a path, and so may live in a folder. */
const PATH_KINDS = ['flow', 'app', 'resource', 'variable', 'schedule', 'http_trigger'] as const;

/** The paths of the items still in folder `name`: scripts, flows, apps, resources, variables, schedules and HTTP routes. */
async function folderItems(store: Deps['store'], workspaceId: string, name: string): Promise<string[]> {
  const inFolder = (path: string) => path.startsWith(`${folderPath(name)}/`);
  const scripts = (await store.listLatestScripts(workspaceId)).map((s) => s.path);
  const others = await Promise.all(PATH_KINDS.map(async (kind) => (await store.listEntities(kind, workspaceId)).map((e) => e.key)));
  return [...new Set([...scripts, ...others.flat()].filter(inFolder))].sort();
}

/**
 * Whether anything of an earlier folder of this name is kept: its items (a folder deleted before
 * deletes checked them), the runs of its scripts and flows with their arguments, results and logs,
 * its flow and app versions (read by id). The owners of a folder of that name would read them all.
 */
async function keepsHistory(store: Deps['store'], workspaceId: string, name: string): Promise<boolean> {
  const prefix = `${folderPath(name)}/`;
  if ((await store.queryJobs({ workspace_id: workspaceId, path_prefix: prefix, limit: 1 })).length > 0) return true;
  if ((await folderItems(store, workspaceId, name)).length > 0) return true;
  for (const kind of ['flow_version', 'app_version'] as const) {
    if ((await store.listEntities(kind, workspaceId)).some((e) => typeof e.value.path === 'string' && e.value.path.startsWith(prefix))) return true;
  }
  return false;
}

/**
 * Deletes a folder that holds nothing any more. Rights on `f/<name>/...` follow the folder by its
 * name, so a folder deleted with items in it would hand them, secrets included, to whoever creates
 * a folder of that name next (any developer may): its items must go first (409 naming them).
 */
export async function deleteFolder(deps: Deps, rights: Rights, name: string): Promise<void> {
  rights.check('folders', 'write', name);
  await requireEntity(deps.store, 'folder', rights.workspaceId, name, what(name));
  const left = await folderItems(deps.store, rights.workspaceId, name);
  if (left.length > 0) {
    const shown = left.slice(0, 5).join(', ') + (left.length > 5 ? `, and ${left.length - 5} more` : '');
    throw conflict(`${what(name)} still holds ${left.length} item${left.length === 1 ? '' : 's'} (${shown}): delete them first`);
  }
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  await deleteEntity(deps.store, 'folder', rights.workspaceId, name, what(name), announce('DeleteFolder', { kind: 'folder', path: folderPath(name) }));
}
