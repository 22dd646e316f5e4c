import { z } from 'zod';
import { badRequest, conflict } from '../common/errors.js';
import { assertItemPath } from '../common/paths.js';
import { parseBody } from '../common/validation.js';
import { deleteEntity, entityView, type EntityView, listEntityValues, readEntity, requireEntity, tryCreateEntity, tryReplaceEntity } from '../store/entities.js';
import { resolveRunTarget } from '../jobs/run-target.js';
import { getVariable } from '../workspace/variables.js';
import { getResource } from '../workspace/resources.js';
import { audit } from '../identity/login-throttle.js';
import { ApiError } from '../common/errors.js';
import { HTTP_METHODS, parseRoutePath, routeKey } from './route-paths.js';
import { AUTHENTICATION_METHODS, type HttpRouteIndex, type HttpTrigger } from './http-trigger-document.js';
import { authorOf } from './author.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * Custom HTTP routes (issue 21, spec 4.10): `/api/r/<workspace>/<route_path>` runs a script or flow
 * of that workspace (core/triggers/route-prefix.ts: the workspace's id or its custom prefix). The
 * route lives in its workspace under its item path; its method and shape are claimed in the
 * workspace's route index first, so two routes of one workspace answering the same URLs cannot both
 * be saved (409 naming the other). Workspaces never share a URL, so a route of one workspace can
 * neither collide with nor shadow nor name a route of another.
 */

type Deps = Pick<CoreDeps, 'store' | 'clock' | 'cipher'>;

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;
const header = z.string().regex(HEADER_NAME, 'must be an HTTP header name');
const optionalPath = z.string().min(1).nullish();

const fields = {
  route_path: z.string(),
  http_method: z.string().transform((m) => m.toLowerCase()).pipe(z.enum(HTTP_METHODS, { message: `must be one of ${HTTP_METHODS.join(', ')}` })),
  script_path: z.string(),
  is_flow: z.boolean().default(false),
  is_async: z.boolean().default(false),
  authentication_method: z.enum(AUTHENTICATION_METHODS, { message: `must be one of ${AUTHENTICATION_METHODS.join(', ')}` }).default('svc'),
  summary: z.string().max(1000).default(''),
  description: z.string().max(10_000).default(''),
  wrap_body: z.boolean().default(false),
  raw_string: z.boolean().default(false),
  api_key_header: header.nullish(),
  signature_header: header.nullish(),
  secret_variable: optionalPath,
  basic_auth_resource: optionalPath,
  inject_token_variable: optionalPath,
};
export const createBody = z.object({ path: z.string(), ...fields }).strict();
/** An update replaces the route whole (as the CLI pushes it); `path` may be repeated, not changed. */
export const updateBody = z.object({ path: z.string().optional(), ...fields }).strict();
type Input = z.infer<typeof updateBody>;

const what = (path: string) => `http route ${path}`;

export type HttpTriggerView = EntityView<'http_trigger'>;

const view = entityView<'http_trigger'>;

export async function createHttpTrigger(deps: Deps, rights: Rights, body: unknown): Promise<HttpTriggerView> {
  const input = parseBody(createBody, body);
  assertItemPath(input.path);
  rights.check('http_triggers', 'write', input.path);
  const trigger = await checkedTrigger(deps, rights, input.path, input, rights.principal.username);
  await claimRoute(deps, rights, trigger);
  const created = await tryCreateEntity(deps.store, deps.clock, 'http_trigger', rights.workspaceId, input.path, trigger);
  if (!created) {
    await releaseRoute(deps, rights.workspaceId, trigger);
    throw conflict(`${what(input.path)} already exists`);
  }
  await audit(deps, 'http_trigger_created', auditDetail(rights, trigger));
  return view(created);
}

export async function updateHttpTrigger(deps: Deps, rights: Rights, path: string, body: unknown): Promise<HttpTriggerView> {
  rights.check('http_triggers', 'write', path);
  const input = parseBody(updateBody, body);
  if (input.path !== undefined && input.path !== path) throw badRequest('invalid_request', 'path: a route cannot be moved; delete it and create it at the new path', { field: 'path' });
  const current = await requireEntity(deps.store, 'http_trigger', rights.workspaceId, path, what(path));
  const next = await checkedTrigger(deps, rights, path, input, current.value.created_by);
  const moved = routeKey(next.http_method, next.route_path) !== routeKey(current.value.http_method, current.value.route_path);
  if (moved) await claimRoute(deps, rights, next);
  const saved = await tryReplaceEntity(deps.store, deps.clock, current, next);
  if (!saved) {
    if (moved) await releaseRoute(deps, rights.workspaceId, next);
    throw conflict(`${what(path)} is being changed by someone else; retry`);
  }
  if (moved) await releaseRoute(deps, rights.workspaceId, current.value);
  await audit(deps, 'http_trigger_updated', auditDetail(rights, next));
  return view(saved);
}

export async function getHttpTrigger(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<HttpTriggerView> {
  rights.check('http_triggers', 'read', path);
  return view(await requireEntity(deps.store, 'http_trigger', rights.workspaceId, path, what(path)));
}

export async function listHttpTriggers(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<HttpTriggerView[]> {
  rights.check('http_triggers', 'read');
  return (await listEntityValues(deps.store, 'http_trigger', rights.workspaceId)).filter((e) => rights.can('http_triggers', 'read', e.key)).map(view);
}

export async function deleteHttpTrigger(deps: Deps, rights: Rights, path: string): Promise<void> {
  rights.check('http_triggers', 'write', path);
  const current = await requireEntity(deps.store, 'http_trigger', rights.workspaceId, path, what(path));
  await deleteEntity(deps.store, 'http_trigger', rights.workspaceId, path, what(path));
  await releaseRoute(deps, rights.workspaceId, current.value);
  await audit(deps, 'http_trigger_deleted', auditDetail(rights, current.value));
}

/** Everything a saved route relies on, checked as the one saving it: the runnable, the secrets it names. */
async function checkedTrigger(deps: Deps, rights: Rights, path: string, input: Input, createdBy: string): Promise<HttpTrigger> {
  const routePath = parseRoutePath(input.route_path);
  assertItemPath(input.script_path, 'script_path');
  const target = await resolveRunTarget(deps.store, rights.workspaceId, (p) => rights.can('jobs', 'run', p), { by: 'path', path: input.script_path, only: input.is_flow ? 'flow' : 'script' });
  if (!target.ok && target.reason === 'forbidden') throw rights.denial('jobs', 'run', target.path);
  if (!target.ok) throw badRequest('invalid_request', `script_path: there is no ${input.is_flow ? 'flow' : 'script'} at ${input.script_path}`, { field: 'script_path' });

  const method = input.authentication_method;
  const needs = (field: 'secret_variable' | 'basic_auth_resource', when: boolean) => {
    if (when && !input[field]) throw badRequest('invalid_request', `${field}: required when authentication_method is ${method}`, { field });
    if (!when && input[field]) throw badRequest('invalid_request', `${field}: only used when authentication_method is ${field === 'basic_auth_resource' ? 'basic' : 'api_key or signature'}`, { field });
  };
  needs('secret_variable', method === 'api_key' || method === 'signature');
  needs('basic_auth_resource', method === 'basic');
  if (input.api_key_header && method !== 'api_key') throw badRequest('invalid_request', 'api_key_header: only used when authentication_method is api_key', { field: 'api_key_header' });
  if (input.signature_header && method !== 'signature') throw badRequest('invalid_request', 'signature_header: only used when authentication_method is signature', { field: 'signature_header' });
  if (input.inject_token_variable && method === 'svc') {
    throw badRequest('invalid_request', 'inject_token_variable: a route that injects a token cannot also ask the caller for one (authentication_method svc)', { field: 'inject_token_variable' });
  }
  for (const field of ['secret_variable', 'inject_token_variable'] as const) {
    const variable = input[field];
    if (variable) await assertReadable(field, () => getVariable(deps, rights, variable), `variable ${variable}`);
  }
  if (input.basic_auth_resource) {
    const resourcePath = input.basic_auth_resource;
    await assertReadable('basic_auth_resource', () => getResource(deps, rights, resourcePath), `connection ${resourcePath}`);
  }

  return {
    path,
    route_path: routePath,
    http_method: input.http_method,
    script_path: input.script_path,
    is_flow: input.is_flow,
    is_async: input.is_async,
    authentication_method: method,
    summary: input.summary,
    description: input.description,
    wrap_body: input.wrap_body,
    raw_string: input.raw_string,
    api_key_header: method === 'api_key' ? (input.api_key_header ?? 'X-API-Key') : null,
    signature_header: method === 'signature' ? (input.signature_header ?? 'X-Signature') : null,
    secret_variable: input.secret_variable ?? null,
    basic_auth_resource: input.basic_auth_resource ?? null,
    inject_token_variable: input.inject_token_variable ?? null,
    ...authorOf(rights),
    created_by: createdBy,
  };
}

/** A route may only name secrets its author may read; a missing one is a 400 naming the field. */
async function assertReadable(field: string, read: () => Promise<unknown>, name: string): Promise<void> {
  try {
    await read();
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) throw badRequest('invalid_request', `${field}: ${name} does not exist`, { field });
    throw e;
  }
}

async function claimRoute(deps: Deps, rights: Rights, t: HttpTrigger): Promise<void> {
  const workspaceId = rights.workspaceId;
  const key = routeKey(t.http_method, t.route_path);
  const entry = { workspace_id: workspaceId, path: t.path, route_path: t.route_path, http_method: t.http_method };
  if (await tryCreateEntity(deps.store, deps.clock, 'http_route', workspaceId, key, entry)) {
    // A route saved before the index was kept per workspace holds its URL without an entry here.
    const older = (await listEntityValues(deps.store, 'http_trigger', workspaceId)).find((e) => e.key !== t.path && routeKey(e.value.http_method, e.value.route_path) === key);
    if (!older) return;
    await deps.store.deleteEntity('http_route', workspaceId, key);
    throw taken(rights, t, older.value);
  }
  const other = await readEntity(deps.store, 'http_route', workspaceId, key);
  // An entry left behind by a save that failed half-way holds the URL for nobody: take it over.
  if (other && !(await holdsEntry(deps, other.value)) && (await tryReplaceEntity(deps.store, deps.clock, other, entry))) return;
  throw taken(rights, t, other?.value ?? null);
}

/** The 409 of a clash inside the workspace: it names the workspace's own route holding the URL. */
function taken(rights: Rights, t: HttpTrigger, by: Pick<HttpRouteIndex, 'path' | 'http_method' | 'route_path'> | null) {
  // Named only to a caller who may read it: the URL is public, the item's path (its folder) is not.
  const holder = by && rights.can('http_triggers', 'read', by.path) ? `route ${by.path} (${by.http_method.toUpperCase()} ${by.route_path})` : 'another route';
  return conflict(`${t.http_method.toUpperCase()} ${t.route_path} is already served in this workspace by ${holder}`);
}

async function holdsEntry(deps: Deps, entry: HttpRouteIndex): Promise<boolean> {
  const trigger = await readEntity(deps.store, 'http_trigger', entry.workspace_id, entry.path);
  return trigger !== null && routeKey(trigger.value.http_method, trigger.value.route_path) === routeKey(entry.http_method, entry.route_path);
}

/** Frees the route's entry if it is still this route's (a concurrent save may own it by now). */
async function releaseRoute(deps: Deps, workspaceId: string, t: HttpTrigger): Promise<void> {
  const key = routeKey(t.http_method, t.route_path);
  const entry = await readEntity(deps.store, 'http_route', workspaceId, key);
  if (entry && entry.value.path === t.path) await deps.store.deleteEntity('http_route', workspaceId, key);
}

function auditDetail(rights: Rights, t: HttpTrigger): Record<string, unknown> {
  return {
    workspace: rights.workspaceId,
    by: rights.principal.username,
    path: t.path,
    route: `${t.http_method.toUpperCase()} /api/r/${rights.workspaceId}/${t.route_path}`,
    script_path: t.script_path,
    authentication_method: t.authentication_method,
  };
}
