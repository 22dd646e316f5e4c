import type YAML from 'yaml';
import { onFirstUse, requireHere } from '../common/on-first-use.js';
import { notFound } from '../common/errors.js';
import { listEntityValues } from '../store/entities.js';
import { findLatestFlow } from '../flows/flows.js';
import { buildOpenApiDocument, type RouteInfo, type RunnableInfo } from './document.js';
import { parseSelection, type OpenApiFormat, type RunnableKind } from './selection.js';
import type { HttpTrigger } from '../triggers/http-trigger-document.js';
import { routeBase } from '../triggers/route-prefix.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/** Loaded with the first YAML written (on-first-use.ts). */
const yaml = onFirstUse(() => (typeof require === 'function' ? require('yaml') : requireHere('yaml')) as typeof YAML);

/**
 * `POST /api/w/<ws>/openapi/generate` (issue 21, spec 4.10): the OpenAPI 3.1 document of the
 * workspace's routes and webhooks the filters select, limited to what the caller may read (a
 * route whose script the caller may not read is listed without that script's schema). Both
 * shells serve this one function. The server URL defaults to the instance's public base URL, the
 * one resume and approval links start with.
 */

export interface GeneratedDocument {
  format: OpenApiFormat;
  contentType: string;
  text: string;
}

type Deps = Pick<CoreDeps, 'store' | 'config'>;

/** `requestOrigin`: the server URL when neither the body nor the instance names one. */
export async function generateOpenApi(deps: Deps, rights: Rights, body: unknown, requestOrigin: string): Promise<GeneratedDocument> {
  const selection = parseSelection(body);
  const routes = selection.wantsRoutes ? await selectedRoutes(deps, rights, selection.route) : [];
  const webhooks = selection.wantsWebhooks ? await selectedWebhooks(deps, rights, selection.webhook) : [];
  if (routes.length === 0 && webhooks.length === 0) {
    throw notFound(`any route or webhook you may read in workspace ${rights.workspaceId} that matches these filters`);
  }
  const document = buildOpenApiDocument({ info: selection.info, serverUrl: selection.url ?? (deps.config.baseInternalUrl || requestOrigin), workspaceId: rights.workspaceId, routeBase: await routeBase(deps.store, rights.workspaceId), routes, webhooks });
  if (selection.format === 'yaml') return { format: 'yaml', contentType: 'application/yaml', text: yaml.stringify(document, { aliasDuplicateObjects: false, lineWidth: 0 }) };
  return { format: 'json', contentType: 'application/json', text: `${JSON.stringify(document, null, 2)}\n` };
}

async function selectedRoutes(deps: Deps, rights: Rights, selects: (path: string, routePath: string) => boolean): Promise<RouteInfo[]> {
  const triggers = (await listEntityValues(deps.store, 'http_trigger', rights.workspaceId))
    .map((e) => e.value)
    .filter((t) => rights.can('http_triggers', 'read', t.path) && selects(t.path, t.route_path))
    .sort((a, b) => a.route_path.localeCompare(b.route_path) || a.http_method.localeCompare(b.http_method));
  return Promise.all(triggers.map(async (t) => ({ trigger: t, target: await routeTarget(deps, rights, t) })));
}

async function routeTarget(deps: Deps, rights: Rights, t: HttpTrigger): Promise<RunnableInfo | null> {
  const kind: RunnableKind = t.is_flow ? 'flow' : 'script';
  if (!rights.can(kind === 'flow' ? 'flows' : 'scripts', 'read', t.script_path)) return null;
  return readRunnable(deps, rights.workspaceId, kind, t.script_path);
}

async function selectedWebhooks(deps: Deps, rights: Rights, selects: (kind: RunnableKind, path: string) => boolean): Promise<RunnableInfo[]> {
  const scripts: RunnableInfo[] = rights.can('scripts', 'read')
    ? (await deps.store.listLatestScripts(rights.workspaceId))
        .filter((s) => rights.can('scripts', 'read', s.path) && selects('script', s.path))
        .map((s) => ({ kind: 'script', path: s.path, summary: s.summary, description: s.description, schema: s.schema }))
    : [];
  const flowPaths = rights.can('flows', 'read')
    ? (await listEntityValues(deps.store, 'flow', rights.workspaceId)).map((e) => e.value).filter((h) => !h.archived && rights.can('flows', 'read', h.path) && selects('flow', h.path)).map((h) => h.path)
    : [];
  const flows = await Promise.all(flowPaths.map((p) => readRunnable(deps, rights.workspaceId, 'flow', p)));
  return [...scripts, ...flows.filter((r): r is RunnableInfo => r !== null)].sort((a, b) => a.path.localeCompare(b.path));
}

async function readRunnable(deps: Deps, workspaceId: string, kind: RunnableKind, path: string): Promise<RunnableInfo | null> {
  if (kind === 'script') {
    const s = await deps.store.getLatestScript(workspaceId, path);
    return s && { kind, path, summary: s.summary, description: s.description, schema: s.schema };
  }
  const f = await findLatestFlow(deps.store, workspaceId, path);
  return f && { kind, path, summary: f.summary, description: f.description, schema: f.schema };
}
