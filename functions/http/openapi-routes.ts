import { Hono } from 'hono';
import { generateOpenApi } from '../core/openapi/generate.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';

/** The OpenAPI document of a workspace's routes and webhooks (issue 21), under `/api/w/:workspace`. */
export function openApiRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();
  r.post('/openapi/generate', async (c) => {
    const document = await generateOpenApi(deps, c.get('rights'), await readJsonBody(c), new URL(c.req.url).origin);
    return c.body(document.text, 200, { 'content-type': `${document.contentType}; charset=utf-8`, 'cache-control': 'no-store' });
  });
  return r;
}
