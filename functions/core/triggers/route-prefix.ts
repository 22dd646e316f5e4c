import { z } from 'zod';
import { conflict } from '../common/errors.js';
import { assertWorkspaceId } from '../common/paths.js';
import { parseBody } from '../common/validation.js';
import { listEntityValues, readEntity, tryCreateEntity } from '../store/entities.js';
import { requireInstanceAdmin, type Principal } from '../identity/auth.js';
import { audit } from '../identity/login-throttle.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import type { Store } from '../../ports.js';

/**
 * Where a workspace's HTTP routes are served (README: HTTP routes). Every route lives under its
 * workspace: `/api/r/<workspace id>/<route_path>`. An instance admin may give a workspace one
 * custom prefix as well (`/api/r/<prefix>/<route_path>`, e.g. a short name for a long id). The
 * first segment after `/api/r/` names exactly one workspace: a prefix is never a workspace id nor
 * another workspace's prefix, and a workspace is never created with an id that is a prefix.
 */

/** Instance-wide documents: one per assigned prefix, keyed by the prefix. */
const PREFIX_SCOPE = '*instance';

export interface RoutePrefixView {
  prefix: string | null;
  /** Where the workspace's routes are served from the service's root (its prefix, else its id). */
  route_base: string;
}

export const prefixBody = z.object({ prefix: z.string().nullable() }).strict();

/** The workspace a URL's first segment names (its id or its prefix), or null. */
export async function workspaceOfRouteSegment(store: Store, segment: string): Promise<string | null> {
  if (segment === '') return null;
  const ws = await store.getWorkspace(segment);
  if (ws) return ws.id;
  return (await readEntity(store, 'route_prefix', PREFIX_SCOPE, segment))?.value.workspace_id ?? null;
}

/** Whether `id` is taken as a route prefix (a new workspace may not have it as its id). */
export async function isRoutePrefix(store: Store, id: string): Promise<boolean> {
  return (await readEntity(store, 'route_prefix', PREFIX_SCOPE, id)) !== null;
}

async function prefixesOf(store: Store, workspaceId: string) {
  return (await listEntityValues(store, 'route_prefix', PREFIX_SCOPE)).filter((e) => e.value.workspace_id === workspaceId);
}

/** `/api/r/<prefix or id>`: what the OpenAPI document and the console show as a route's base. */
export async function routeBase(store: Store, workspaceId: string): Promise<string> {
  const [current] = await prefixesOf(store, workspaceId);
  return `/api/r/${current?.value.prefix ?? workspaceId}`;
}

export async function getRoutePrefix(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<RoutePrefixView> {
  rights.check('workspaces', 'read');
  return viewOf(deps.store, rights.workspaceId);
}

/** Assigns (or with `null` removes) the workspace's prefix: instance admins only, since it takes a name from every workspace's URL space. */
export async function setRoutePrefix(deps: Pick<CoreDeps, 'store' | 'clock'>, principal: Principal, workspaceId: string, body: unknown): Promise<RoutePrefixView> {
  requireInstanceAdmin(principal, 'assign a workspace its route prefix');
  const { prefix } = parseBody(prefixBody, body);
  const before = await prefixesOf(deps.store, workspaceId);
  if (prefix !== null && !before.some((e) => e.key === prefix)) {
    assertWorkspaceId(prefix, 'prefix');
    if (await deps.store.getWorkspace(prefix)) throw conflict(`prefix ${prefix} is the id of a workspace`);
    const entry = { prefix, workspace_id: workspaceId, assigned_by: principal.username };
    if (!(await tryCreateEntity(deps.store, deps.clock, 'route_prefix', PREFIX_SCOPE, prefix, entry))) throw conflict(`prefix ${prefix} is already assigned to a workspace`);
  }
  for (const old of before) if (old.key !== prefix) await deps.store.deleteEntity('route_prefix', PREFIX_SCOPE, old.key);
  await audit(deps, 'route_prefix_set', { workspace: workspaceId, by: principal.username, prefix });
  return viewOf(deps.store, workspaceId);
}

async function viewOf(store: Store, workspaceId: string): Promise<RoutePrefixView> {
  const [current] = await prefixesOf(store, workspaceId);
  if (!current) return { prefix: null, route_base: `/api/r/${workspaceId}` };
  return { prefix: current.value.prefix, route_base: `/api/r/${current.value.prefix}` };
}
