import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../core/errors.js';
import { authenticate } from '../core/auth.js';
import { requireWorkspace } from '../core/workspaces.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { errorResponse, notFoundResponse } from './errors.js';
import { workspaceRoutes } from './workspace-routes.js';
import { scriptRoutes } from './script-routes.js';
import { jobRoutes } from './job-routes.js';
import { runRoutes } from './run-routes.js';

export interface AppOptions {
  maxBodyBytes: number;
  version: string;
  /** How long an SSE stream may stay silent before a comment line keeps proxies from closing it. */
  sseKeepAliveMs: number;
}

/** The whole HTTP API; the local server and the Lambda handler serve this same app. */
export function createApp(deps: CoreDeps, opts: AppOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError((err, c) => errorResponse(c, err));
  app.notFound(notFoundResponse);

  app.use(
    '*',
    bodyLimit({
      maxSize: opts.maxBodyBytes,
      onError: (c) => errorResponse(c, new ApiError(413, 'payload_too_large', `the request body exceeds the limit of ${opts.maxBodyBytes} bytes`)),
    }),
  );

  app.get('/api/version', (c) => c.text(`svc v${opts.version}`));

  app.use('/api/*', async (c, next) => {
    if (c.req.path === '/api/version') return next();
    c.set('principal', await authenticate(deps, bearerToken(c.req.header('authorization'), c.req.query('token'))));
    await next();
  });
  app.use('/api/w/:workspace/*', async (c, next) => {
    c.set('workspace', await requireWorkspace(deps.store, c.req.param('workspace')));
    await next();
  });

  app.route('/api', workspaceRoutes(deps));
  app.route('/api/w/:workspace', scriptRoutes(deps));
  app.route('/api/w/:workspace', jobRoutes(deps));
  app.route('/api/w/:workspace', runRoutes(deps, opts.sseKeepAliveMs));
  return app;
}

/** Spec 5.1: the header is preferred; `?token=` is the alternative for clients that cannot set one. */
function bearerToken(header: string | undefined, query: string | undefined): string | null {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1] ?? query ?? null;
}
