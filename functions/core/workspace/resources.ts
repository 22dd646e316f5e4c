import { z } from 'zod';
import { badRequest } from '../common/errors.js';
import { assertItemPath } from '../common/paths.js';
import { createEntity, deleteEntity, listEntityValues, requireEntity, updateEntity } from '../store/entities.js';
import { findResourceType, validateResourceValue } from './resource-types.js';
import { parseBody } from '../common/validation.js';
import { withoutWindmillDefaults } from '../common/windmill-only-fields.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import { workspaceAnnouncer } from '../events/announce.js';

type Deps = Pick<CoreDeps, 'store' | 'clock' | 'config'>;
import type { Entity } from '../../ports.js';
import type { Resource } from './workspace-documents.js';

/** Connections (resources): typed values at workspace paths (spec 1.3, 2.1-2.2, 4.6). */

/** Kept well under DynamoDB's 400 KB item limit together with the rest of the record. */
export const MAX_VALUE_BYTES = 64 * 1024;

export const createBody = z.strictObject({
  path: z.string(),
  value: z.unknown(),
  resource_type: z.string().min(1).max(100),
  description: z.string().max(10_000).default(''),
});

export const updateBody = z.strictObject({
  /** Windmill's clients send it (a rename there): svc takes it when it is the path updated. */
  path: z.string().optional(),
  value: z.unknown().optional(),
  resource_type: z.string().min(1).max(100).optional(),
  description: z.string().max(10_000).optional(),
});

const what = (path: string) => `resource ${path}`;

export function assertValueSize(value: unknown): void {
  if (Buffer.byteLength(JSON.stringify(value ?? null)) > MAX_VALUE_BYTES) {
    throw badRequest('value_too_large', `value: larger than ${MAX_VALUE_BYTES} bytes`, { field: 'value' });
  }
}

async function checkedValue(deps: Pick<CoreDeps, 'store'>, workspaceId: string, typeName: string, value: unknown): Promise<void> {
  if (value === undefined) throw badRequest('invalid_request', 'value: required', { field: 'value' });
  assertValueSize(value);
  const type = await findResourceType(deps, workspaceId, typeName);
  if (!type) throw badRequest('unknown_resource_type', `resource_type: no resource type ${typeName} in this workspace`, { field: 'resource_type' });
  validateResourceValue(type, value);
}

export async function createResource(deps: Deps, rights: Rights, body: unknown): Promise<Resource> {
  const input = parseBody(createBody, withoutWindmillDefaults('resource', body));
  assertItemPath(input.path);
  rights.check('resources', 'write', input.path);
  await checkedValue(deps, rights.workspaceId, input.resource_type, input.value);
  const resource: Resource = {
    path: input.path,
    resource_type: input.resource_type,
    value: input.value,
    description: input.description,
    created_by: rights.principal.username,
  };
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  return (await createEntity(deps.store, deps.clock, 'resource', rights.workspaceId, input.path, resource, what(input.path), (e) => announce('CreateResource', { kind: 'resource', path: e.key, version: e.version, extra: { resource_type: resource.resource_type } }))).value;
}

export async function updateResource(deps: Deps, rights: Rights, path: string, body: unknown): Promise<Resource> {
  rights.check('resources', 'write', path);
  const input = parseBody(updateBody, withoutWindmillDefaults('resource', body));
  if (input.path !== undefined && input.path !== path) throw badRequest('invalid_request', `path: a resource cannot be moved by an update`, { field: 'path' });
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  const e = await updateEntity(deps.store, deps.clock, 'resource', rights.workspaceId, path, what(path), async (r) => {
    const next = { ...r, value: input.value ?? r.value, resource_type: input.resource_type ?? r.resource_type, description: input.description ?? r.description };
    await checkedValue(deps, rights.workspaceId, next.resource_type, next.value);
    return next;
  }, (next) => announce('UpdateResource', { kind: 'resource', path: next.key, version: next.version, extra: { resource_type: next.value.resource_type } }));
  return e.value;
}

export async function deleteResource(deps: Deps, rights: Rights, path: string): Promise<void> {
  rights.check('resources', 'write', path);
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  await deleteEntity(deps.store, 'resource', rights.workspaceId, path, what(path), announce('DeleteResource', { kind: 'resource', path }));
}

export type ResourceView = Resource & { created_at: string; updated_at: string };

const view = (e: Entity<Resource>): ResourceView => ({ ...e.value, created_at: e.created_at, updated_at: e.updated_at });

/** Spec 4.6: an object whose `value` is the connection's content. */
export async function getResource(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<ResourceView> {
  rights.check('resources', 'read', path);
  return view(await requireEntity(deps.store, 'resource', rights.workspaceId, path, what(path)));
}

/** The listing leaves values out (they hold credentials); `get` returns them to those who may read. */
export async function listResources(deps: Pick<CoreDeps, 'store'>, rights: Rights, resourceType?: string): Promise<Omit<ResourceView, 'value'>[]> {
  rights.check('resources', 'read');
  return (await listEntityValues(deps.store, 'resource', rights.workspaceId))
    .filter((e) => rights.can('resources', 'read', e.key) && (!resourceType || e.value.resource_type === resourceType))
    .map((e) => {
      const { value: _value, ...rest } = view(e);
      return rest;
    });
}
