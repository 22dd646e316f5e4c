import type { GoTarget } from '../ports.js';
import { Hono } from 'hono';
import { requestId } from 'hono/request-id';
import type { Context } from 'hono';
import { ApiError } from '../core/common/errors.js';
import { authenticate } from '../core/identity/auth.js';
import { Rights } from '../core/identity/permissions.js';
import { sessionOf } from './session-cookie.js';
import { requireWorkspace, workspaceOrStandIn } from '../core/workspace/workspaces.js';
import type { CoreDeps } from '../core/deps.js';
import type { RuntimeView } from '../core/views/approval-views.js';
import type { AppEnv } from './context.js';
import { errorResponse, notFoundResponse } from './errors.js';
import { workspaceMemberRoutes, workspaceRoutes } from './workspace-routes.js';
import { authRoutes } from './auth-routes.js';
import { groupFolderRoutes } from './group-folder-routes.js';
import { resourceVariableRoutes } from './resource-variable-routes.js';
import { flowRoutes } from './flow-routes.js';
import { approvalRoutes } from './approval-routes.js';
import { consentRoutes } from './consent-routes.js';
import { approvalsPageRoutes } from './approvals-inbox-page.js';
import { loginPageRoutes } from './login-page.js';
import { tokenPageRoutes } from './token-page.js';
import { settingsPageRoutes } from './settings-page.js';
import { scriptRoutes } from './script-routes.js';
import { jobRoutes } from './job-routes.js';
import { uploadRoutes } from './upload-routes.js';
import { streamsBody } from './incoming.js';
import { runRoutes } from './run-routes.js';
import { consoleApiRoutes } from './console-api-routes.js';
import { consolePageRoutes } from './console/pages.js';
import { appRoutes } from './app-routes.js';
import { instanceWebhookRoutes, workspaceWebhookRoutes } from './webhook-routes.js';
import { httpTriggerRoutes, servedRoutes } from './http-trigger-routes.js';
import { openApiRoutes } from './openapi-routes.js';
import { openApiPageRoutes } from './openapi-page.js';
import { apiOpenApiRoutes } from './api-openapi-routes.js';
import { scheduleRoutes } from './schedule-routes.js';
import { chatRoutes } from './chat-routes.js';
import { windmillCompatRoutes } from './windmill-compat-routes.js';
import { bearerToken } from './bearer.js';
import { assertSameOrigin, securityHeaders } from './security-headers.js';
import { requestBodyLimit } from './body-limit.js';

export interface AppOptions {
  maxBodyBytes: number;
  version: string;
  /** How long an SSE stream may stay silent before a comment line keeps proxies from closing it. */
  sseKeepAliveMs: number;
  /**
   * The longest an SSE stream lasts (the AWS shell: under the api function's timeout); it then ends
   * with a `timeout` event saying where to resume. Unset: as long as the job.
   */
  sseMaxMs?: number;
  /** How this shell confines jobs (served at GET /api/runtime, so nobody is unconfined unknowingly). */
  runtime?: unknown;
  /** Where Go binaries must be built for (GET /api/runtime `go_target`): the AWS sandbox's platform. */
  goTarget?: GoTarget;
  /**
   * Whether this shell streams request bodies (local: yes; behind API Gateway every body arrives
   * whole): then multipart webhooks and upload parts may exceed the body limit (README: Large uploads).
   */
  streamsBodies?: boolean;
  /**
   * Whether requests come from an HTTP/1.1 server (local: Node's), where one with neither
   * Content-Length nor Transfer-Encoding has no body. Behind API Gateway a body may come without
   * either (HTTP/2 clients), so there the body limit reads what there is.
   */
  http1?: boolean;
}

/** The whole HTTP API; the local server and the Lambda handler serve this same app. */
export function createApp(deps: CoreDeps, opts: AppOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError((err, c) => errorResponse(c, err));
  app.notFound(notFoundResponse);
  // Every log line of a request carries its id; the caller sees it in X-Request-Id.
  app.use('*', requestId({ generator: newRequestId }));
  app.use('*', securityHeaders);
  app.use('*', async (c, next) => {
    // Every name, path and id fits well inside this; the stores' keys have hard size limits
    // (DynamoDB: 1,024 bytes for a sort key), so a longer path could only fail further in.
    if (Buffer.byteLength(c.req.path) > MAX_PATH_BYTES) {
      return errorResponse(c, new ApiError(414, 'uri_too_long', `the request path is longer than ${MAX_PATH_BYTES} bytes`));
    }
    await next();
  });

  const limitBody = requestBodyLimit(opts.maxBodyBytes, (c) => bodyTooLarge(c, opts.maxBodyBytes), { http1: opts.http1 ?? false });
  // Streamed bodies have their own limits (the upload size, a part's size), checked as they are read.
  app.use('*', (c, next) => (opts.streamsBodies && isStreamedUpload(c) ? next() : limitBody(c, next)));

  app.get('/api/version', (c) => c.text(`svc v${opts.version}`));
  app.get('/api/runtime', (c) => c.json({ confinement: opts.runtime ?? null, go_target: opts.goTarget ?? null } satisfies RuntimeView));
  app.route('/', apiOpenApiRoutes(deps, opts.version));
  app.route('/', approvalRoutes(deps));
  app.route('/', approvalsPageRoutes(deps));
  app.route('/', loginPageRoutes());
  app.route('/', tokenPageRoutes(deps));
  app.route('/', settingsPageRoutes(deps));
  app.route('/', openApiPageRoutes(deps));
  app.route('/', consolePageRoutes(deps));
  // Custom routes authenticate their callers themselves (none, a key, a signature, ...).
  app.route('/api/r', servedRoutes(deps));

  app.use('/api/*', async (c, next) => {
    const credentials = { bearer: bearerToken(c.req.header('authorization'), c.req.query('token')), session: sessionOf(c) };
    // What a browser sends on its own (the cookie, or a login form's password) must come from our pages.
    if (!credentials.bearer && (credentials.session || c.req.path === '/api/auth/login')) assertSameOrigin(c.req);
    if (PUBLIC_PATHS.has(c.req.path)) return next();
    // Chat apps prove who they are themselves: Slack signs the request, Teams sends its own JWT.
    if (CHAT_CALLBACKS.test(c.req.path)) return next();
    // Resume and cancel URLs carry their own secret (spec 5.6); a login only adds who approves.
    if (SIGNED_PATHS.test(c.req.path) && !credentials.bearer && !credentials.session) return next();
    // Logging out with a session that already ended (expired, or ended elsewhere) still logs out:
    // the cookie goes and the browser lands on the login page, not on a 401.
    if (c.req.path === '/api/auth/logout' && !credentials.bearer) {
      const principal = await authenticate(deps, credentials).catch(() => undefined);
      if (principal) c.set('principal', principal);
      return next();
    }
    c.set('principal', await authenticate(deps, credentials));
    c.set('credentials', credentials);
    await next();
  });
  app.use('/api/w/:workspace/*', async (c, next) => {
    const id = c.req.param('workspace');
    const principal = c.get('principal');
    const rights = principal ? await Rights.load(deps, principal, id) : undefined;
    // Who asks before what exists: to a caller who is not a member (or whose token is for another
    // workspace), a workspace that does not exist answers like one they may not enter. Signed URLs
    // and chat callbacks prove their right themselves, further on.
    const provesItself = SIGNED_PATHS.test(c.req.path) || CHAT_CALLBACKS.test(c.req.path);
    if (rights && !rights.entersWorkspace() && !provesItself) throw rights.workspaceDenial();
    c.set('workspace', provesItself ? await workspaceOrStandIn(deps.store, id) : await requireWorkspace(deps.store, id));
    if (rights) c.set('rights', rights);
    await next();
  });

  app.route('/api', authRoutes(deps));
  app.route('/api/v1', consentRoutes(deps));
  app.route('/api', workspaceRoutes(deps));
  app.route('/api', instanceWebhookRoutes(deps));
  app.route('/api/w/:workspace', workspaceMemberRoutes(deps));
  app.route('/api/w/:workspace', workspaceWebhookRoutes(deps));
  app.route('/api/w/:workspace', groupFolderRoutes(deps));
  app.route('/api/w/:workspace', resourceVariableRoutes(deps));
  app.route('/api/w/:workspace', flowRoutes(deps));
  app.route('/api/w/:workspace', appRoutes(deps));
  app.route('/api/w/:workspace', scriptRoutes(deps));
  app.route('/api/w/:workspace', jobRoutes(deps));
  app.route('/api/w/:workspace', uploadRoutes(deps));
  app.route('/api/w/:workspace', consoleApiRoutes(deps, opts.sseKeepAliveMs, opts.sseMaxMs));
  app.route('/api/w/:workspace', runRoutes(deps, opts.sseKeepAliveMs, opts.sseMaxMs));
  app.route('/api/w/:workspace', httpTriggerRoutes(deps));
  app.route('/api/w/:workspace', openApiRoutes(deps));
  app.route('/api/w/:workspace', scheduleRoutes(deps));
  app.route('/api/w/:workspace', chatRoutes(deps));
  // Windmill's client libraries, unchanged inside jobs (docs/windmill.md).
  app.route('/api/w/:workspace', windmillCompatRoutes(deps));
  return app;
}

const MAX_PATH_BYTES = 1000;

const RUN_PATHS = /^\/api\/w\/[^/]+\/jobs\/(run|run_wait_result|run_and_stream)\//;
const UPLOAD_PART_PATH = /^\/api\/w\/[^/]+\/job_helpers\/uploads\/part$/;

function isStreamedUpload(c: Context): boolean {
  return (RUN_PATHS.test(c.req.path) && streamsBody(c)) || (c.req.method === 'PUT' && UPLOAD_PART_PATH.test(c.req.path));
}

/** A multipart body over the limit is told where large files go instead. */
function bodyTooLarge(c: Context, maxBodyBytes: number): ApiError {
  const workspace = /^\/api\/w\/([^/]+)\//.exec(c.req.path)?.[1] ?? '{workspace}';
  const hint = /^multipart\//i.test(c.req.header('content-type') ?? '')
    ? `; upload large files with POST /api/w/${workspace}/job_helpers/uploads/create and name them in the payload (docs/webhooks.md, Large uploads)`
    : '';
  return new ApiError(413, 'payload_too_large', `the request body exceeds the limit of ${maxBodyBytes} bytes${hint}`);
}

/** Reachable without a token. */
const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/api/version', '/api/runtime', '/api/openapi.json', '/api/auth/login']);
const CHAT_CALLBACKS = /^\/api\/w\/[^/]+\/chat\/(slack\/interactions|teams\/messages)$/;
const SIGNED_PATHS = /^\/api\/w\/[^/]+\/(jobs_u\/(resume|cancel)\/|job_helpers\/uploads\/part$)/;

/** On Lambda, API Gateway's own request id (the one its logs show); locally a fresh UUID. */
function newRequestId(c: Context): string {
  const env = c.env as { requestContext?: { requestId?: unknown } } | undefined;
  const lambdaId = env?.requestContext?.requestId;
  return typeof lambdaId === 'string' ? lambdaId : crypto.randomUUID();
}
