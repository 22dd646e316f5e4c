import { notFound } from '../common/errors.js';
import { listEntityValues } from '../store/entities.js';
import { newUuid } from '../common/crypto.js';
import { argsFromRequest, type IncomingRequest } from '../runs/payload.js';
import { resolveForCaller, startRun } from '../runs/start-run.js';
import { syncResponse } from '../runs/sync-run.js';
import { requireWorkspace } from '../workspace/workspaces.js';
import { bySpecificity, matchRoute, HTTP_METHODS } from './route-paths.js';
import { workspaceOfRouteSegment } from './route-prefix.js';
import { authorizeRouteCall } from './route-auth.js';
import { refuseReferences } from '../workspace/bindings.js';
import type { HttpTrigger } from './http-trigger-document.js';
import type { ShapedResponse } from '../runs/sync-response.js';
import type { CoreDeps } from '../deps.js';
import type { JobOrigin } from '../jobs/jobs.js';

/**
 * Answers `/api/r/<workspace>/<url path>`: finds the route among the routes of the workspace the
 * URL names (by id or custom prefix) and nowhere else, checks its authentication, turns the request into
 * arguments (`:name` segments, then query parameters, then the body under the rules of spec 4.2;
 * on a name clash the earlier source wins), and runs it: a sync route answers like
 * run_wait_result (4.4 shaping included), an async one with the job id.
 */

export type RouteAnswer = { kind: 'async'; jobId: string } | { kind: 'sync'; response: ShapedResponse };

export interface RouteRequest {
  method: string;
  /** The URL path after `/api/r/`: the workspace's id or prefix, then the route's path. */
  urlPath: string;
  incoming: IncomingRequest;
  bearer: string | null;
  /** Whether `bearer` came in the Authorization header (not `?token=`, which a link can carry). */
  bearerInHeader: boolean;
}

/** Query parameters that carry credentials or steer webhooks, never passed on as arguments. */
export const RESERVED_QUERY: ReadonlySet<string> = new Set(['token', 'wrap_body', 'raw', 'include_header', 'include_query', 'payload']);

const ROUTE: JobOrigin = { trigger: 'route' };

export async function answerRoute(deps: CoreDeps, req: RouteRequest): Promise<RouteAnswer> {
  const found = await findRoute(deps, req.method, req.urlPath);
  // The same answer whether the workspace, or the route in it, does not exist.
  if (!found) throw notFound(`route ${req.method.toUpperCase()} /api/r/${req.urlPath}`);
  const { workspaceId, trigger, params } = found;
  const rights = await authorizeRouteCall(deps, workspaceId, trigger, { headers: req.incoming.headers, body: req.incoming.body, bearer: req.bearer });
  const runnable = await resolveForCaller(deps, rights, { by: 'path', path: trigger.script_path, only: trigger.is_flow ? 'flow' : 'script' });
  const args = await routeArgs(deps, workspaceId, trigger, req.incoming, params);
  // Only a caller with a svc identity of their own may name variables and resources to read: any other runs as the route's author.
  if (trigger.authentication_method !== 'svc') refuseReferences(args, "a caller without a svc token would read it as the route's author. Send the value itself, or call the route with a token (authentication_method svc)");
  if (trigger.is_async) return { kind: 'async', jobId: (await startRun(deps, rights, runnable, args, undefined, ROUTE)).id };
  // Only a caller who proved a credential in a header may be redirected or asked for one (sync-response.ts).
  const navigation = trigger.authentication_method === 'svc' ? req.bearerInHeader : trigger.authentication_method !== 'none';
  return { kind: 'sync', response: await syncResponse(deps, (id, wait) => startRun(deps, rights, runnable, args, id, ROUTE, wait), { navigation }) };
}

/** The workspace's most specific route matching the request; only that workspace's routes are read. */
async function findRoute(deps: CoreDeps, method: string, urlPath: string) {
  const m = method.toLowerCase();
  if (!(HTTP_METHODS as readonly string[]).includes(m)) return null;
  const slash = urlPath.indexOf('/');
  if (slash <= 0) return null;
  const workspaceId = await workspaceOfRouteSegment(deps.store, urlPath.slice(0, slash));
  if (!workspaceId) return null;
  const routePath = urlPath.slice(slash + 1);
  // The routes themselves, not the index: a deleted or moved route answers nothing at once.
  const [best] = (await listEntityValues(deps.store, 'http_trigger', workspaceId))
    .filter((e) => e.value.http_method === m)
    .map((e) => ({ trigger: e.value, params: matchRoute(e.value.route_path, routePath) }))
    .filter((c): c is { trigger: HttpTrigger; params: Record<string, string> } => c.params !== null)
    .sort((a, b) => bySpecificity(a.trigger.route_path, b.trigger.route_path));
  return best ? { workspaceId, ...best } : null;
}

async function routeArgs(deps: CoreDeps, workspaceId: string, t: HttpTrigger, incoming: IncomingRequest, params: Record<string, string>): Promise<Record<string, unknown>> {
  const workspace = await requireWorkspace(deps.store, workspaceId);
  // The route's own settings stand in for the webhook query switches of spec 4.3.
  const controls: Record<string, string> = {};
  if (t.wrap_body) controls.wrap_body = 'true';
  if (t.raw_string) controls.raw = 'true';
  const bodyArgs = await argsFromRequest(
    { ...incoming, query: controls },
    { ownerPath: t.script_path, workspaceId, objectStorageEnabled: workspace.object_storage_enabled, blobs: deps.blobs, includeHeaders: deps.config.includeHeaders, newId: newUuid },
  );
  const queryArgs = Object.fromEntries(Object.entries(incoming.query).filter(([name]) => !RESERVED_QUERY.has(name)));
  return { ...bodyArgs, ...queryArgs, ...params };
}
