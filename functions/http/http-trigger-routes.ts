import { Hono } from 'hono';
import { createHttpTrigger, deleteHttpTrigger, getHttpTrigger, listHttpTriggers, updateHttpTrigger } from '../core/triggers/http-triggers.js';
import { answerRoute } from '../core/triggers/serve-route.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { toIncoming } from './incoming.js';
import { readJsonBody } from './json-body.js';
import { bearerToken } from './bearer.js';
import { listQueryOf, pageQuery, pageOf } from './list-query.js';

/** Managing custom HTTP routes (issue 21), under `/api/w/:workspace`. */
export function httpTriggerRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();
  r.post('/http_triggers/create', async (c) => c.json(await createHttpTrigger(deps, c.get('rights'), await readJsonBody(c)), 201));
  r.post('/http_triggers/update/:path{.+}', async (c) => c.json(await updateHttpTrigger(deps, c.get('rights'), c.req.param('path'), await readJsonBody(c))));
  r.get('/http_triggers/get/:path{.+}', async (c) => c.json(await getHttpTrigger(deps, c.get('rights'), c.req.param('path'))));
  r.get('/http_triggers/list', async (c) => {
    const q = listQueryOf(c, pageQuery);
    return c.json(pageOf(await listHttpTriggers(deps, c.get('rights')), q));
  });
  r.delete('/http_triggers/delete/:path{.+}', async (c) => {
    await deleteHttpTrigger(deps, c.get('rights'), c.req.param('path'));
    return c.text(`deleted http route ${c.req.param('path')}`);
  });
  return r;
}

/**
 * The routes themselves, at `/api/r/<workspace id or prefix>/*`. Each route authenticates its callers its own way
 * (core/triggers/route-auth.ts), so the API's token check does not run in front of them.
 */
export function servedRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();
  r.all('/*', async (c) => {
    const urlPath = c.req.path.replace(/^\/api\/r\/?/, '');
    const answer = await answerRoute(deps, {
      method: c.req.method,
      urlPath,
      incoming: await toIncoming(c, { maxFileBytes: deps.config.uploads.maxBytes, stream: false }),
      bearer: bearerToken(c.req.header('authorization'), c.req.query('token')),
      bearerInHeader: bearerToken(c.req.header('authorization'), undefined) !== null,
    });
    if (answer.kind === 'async') return c.text(answer.jobId, 201);
    return new Response(answer.response.body, { status: answer.response.status, headers: answer.response.headers });
  });
  return r;
}
