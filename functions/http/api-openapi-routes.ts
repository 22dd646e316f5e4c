import { Hono, type Context } from 'hono';
import { buildApiDocument } from '../core/openapi/api-document.js';
import { sessionCookieName } from './session-cookie.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { API_OPERATIONS } from './api-catalog/index.js';
import { renderApiReferencePage } from './api-reference-page.js';

/**
 * `GET /api/openapi.json`: the OpenAPI 3.1 document of svc's own API, public as Windmill's
 * `/api/openapi.yaml` is (it describes the API, never a workspace's content); `GET /openapi`: the
 * same document as a page to read. Built once per server URL, from the catalog and its zod schemas.
 */
export function apiOpenApiRoutes(deps: CoreDeps, version: string) {
  const r = new Hono<AppEnv>();
  const built = new Map<string, Record<string, unknown>>();
  // The session cookie's name follows the scheme the browser uses (session-cookie.ts).
  const documentFor = (c: Context) => {
    const serverUrl = deps.config.baseInternalUrl || new URL(c.req.url).origin;
    const sessionCookie = sessionCookieName(c);
    const key = `${sessionCookie} ${serverUrl}`;
    let document = built.get(key);
    if (!document) {
      document = buildApiDocument({ version, serverUrl, sessionCookie, operations: API_OPERATIONS });
      if (built.size < 8) built.set(key, document);
    }
    return document;
  };
  r.get('/api/openapi.json', (c) => c.json(documentFor(c)));
  r.get('/openapi', (c) => c.html(renderApiReferencePage(documentFor(c))));
  return r;
}
