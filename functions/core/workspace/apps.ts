import { z } from 'zod';
import { badRequest, conflict, notFound } from '../common/errors.js';
import { assertItemPath } from '../common/paths.js';
import { objectBody, parseBody } from '../common/validation.js';
import { withoutWindmillDefaults } from '../common/windmill-only-fields.js';
import { workspaceAnnouncer } from '../events/announce.js';
import { createEntity, getEntityValue, listEntityValues, requireEntity, updateEntity, deleteEntity } from '../store/entities.js';
import { nextSequence } from '../store/sequences.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import type { AppHead, AppVersion } from './workspace-documents.js';

/**
 * Apps (spec 6.1's app lifecycle): versioned app definitions, the JSON an app builder produces,
 * stored as they come (rendering them is not this service's part yet). Like flows, each save is a
 * new version with a global increasing id, and the path's head names the latest; rights follow the
 * path (`u/<user>/...`, `f/<folder>/...`) through the `apps` domain.
 */

/** Kept well under DynamoDB's 400 KB item with the rest of the record. */
export const MAX_APP_BYTES = 300 * 1024;

export const appBody = z.strictObject({
  path: z.string(),
  summary: z.string().max(1000).default(''),
  value: z.record(z.string(), z.unknown()),
  policy: z.record(z.string(), z.unknown()).nullish(),
  deployment_message: z.string().max(1000).optional(),
});

const VERSIONS = 'app_version';
const versionKey = (id: number) => String(id).padStart(12, '0');
const what = (path: string) => `app ${path}`;

type Deps = Pick<CoreDeps, 'store' | 'clock' | 'config'>;

async function storeVersion(deps: Deps, rights: Rights, input: z.infer<typeof appBody>): Promise<AppVersion> {
  if (Buffer.byteLength(JSON.stringify(input.value)) > MAX_APP_BYTES) throw badRequest('value_too_large', `value: larger than ${MAX_APP_BYTES} bytes`, { field: 'value' });
  const id = await nextSequence(deps.store, deps.clock, VERSIONS);
  const version: AppVersion = {
    id,
    path: input.path,
    summary: input.summary,
    value: input.value,
    policy: input.policy ?? null,
    ...(input.deployment_message ? { deployment_message: input.deployment_message } : {}),
    created_by: rights.principal.username,
    created_at: deps.clock.now().toISOString(),
  };
  await createEntity(deps.store, deps.clock, 'app_version', rights.workspaceId, versionKey(id), version, `app version ${id}`);
  return version;
}

export async function createApp(deps: Deps, rights: Rights, body: unknown): Promise<AppVersion> {
  const input = parseBody(appBody, withoutWindmillDefaults('app', body));
  assertItemPath(input.path);
  rights.check('apps', 'write', input.path);
  if (await deps.store.getEntity('app', rights.workspaceId, input.path)) throw conflict(`${what(input.path)} already exists: update it instead`);
  const version = await storeVersion(deps, rights, input);
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  await createEntity(deps.store, deps.clock, 'app', rights.workspaceId, input.path, { path: input.path, version: version.id }, what(input.path), () =>
    announce('CreateApp', { kind: 'app', path: input.path, version: version.id }),
  );
  return version;
}

export async function updateApp(deps: Deps, rights: Rights, path: string, body: unknown): Promise<AppVersion> {
  rights.check('apps', 'write', path);
  const current = await latestApp(deps, rights.workspaceId, path);
  // An update may leave out what it does not change; a path it gives is the app's own or refused below, never ignored.
  const input = parseBody(appBody, withoutWindmillDefaults('app', { summary: current.summary, value: current.value, policy: current.policy, path, ...objectBody(body) }));
  if (input.path !== path) throw badRequest('invalid_request', 'path: an app cannot be moved by an update', { field: 'path' });
  const version = await storeVersion(deps, rights, input);
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  await updateEntity(deps.store, deps.clock, 'app', rights.workspaceId, path, what(path), (h) => ({ ...h, version: Math.max(h.version, version.id) }), () =>
    announce('UpdateApp', { kind: 'app', path, version: version.id }),
  );
  return version;
}

async function latestApp(deps: Pick<CoreDeps, 'store'>, workspaceId: string, path: string): Promise<AppVersion> {
  const head = await requireEntity(deps.store, 'app', workspaceId, path, what(path));
  const version = await getEntityValue(deps.store, 'app_version', workspaceId, versionKey(head.value.version));
  if (!version) throw notFound(`app version ${head.value.version}`);
  return version;
}

export async function getApp(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<AppVersion> {
  rights.check('apps', 'read', path);
  return latestApp(deps, rights.workspaceId, path);
}

export async function getAppVersion(deps: Pick<CoreDeps, 'store'>, rights: Rights, id: number): Promise<AppVersion> {
  const version = await getEntityValue(deps.store, 'app_version', rights.workspaceId, versionKey(id));
  // Version ids are counted: one the caller may not read answers as one that does not exist.
  if (!version || !rights.can('apps', 'read', version.path)) throw notFound(`app version ${id}`);
  return version;
}

export async function listApps(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<AppHead[]> {
  rights.check('apps', 'read');
  return (await listEntityValues(deps.store, 'app', rights.workspaceId)).map((e) => e.value).filter((h) => rights.can('apps', 'read', h.path));
}

/** Newest first. */
export async function appHistory(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<{ id: number; created_at: string; created_by: string; summary: string; deployment_message?: string }[]> {
  rights.check('apps', 'read', path);
  const versions = (await listEntityValues(deps.store, 'app_version', rights.workspaceId)).map((e) => e.value).filter((v) => v.path === path);
  if (versions.length === 0) throw notFound(what(path));
  return versions
    .sort((a, b) => b.id - a.id)
    .map((v) => ({ id: v.id, created_at: v.created_at, created_by: v.created_by, summary: v.summary, ...(v.deployment_message ? { deployment_message: v.deployment_message } : {}) }));
}

/** Removes the path; its versions stay, as a flow's do. */
export async function deleteApp(deps: Deps, rights: Rights, path: string): Promise<void> {
  rights.check('apps', 'write', path);
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  await deleteEntity(deps.store, 'app', rights.workspaceId, path, what(path), announce('DeleteApp', { kind: 'app', path }));
}
