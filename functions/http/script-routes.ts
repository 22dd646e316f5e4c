import { Hono, type Context } from 'hono';
import { authorize } from '../core/auth.js';
import { createScript, deleteScript, getScriptByHash, getScriptByPath, scriptSummary } from '../core/scripts.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';

export function scriptRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();
  const ws = (c: Context<AppEnv>) => c.get('workspace').id;

  r.post('/scripts/create', async (c) => {
    const principal = c.get('principal');
    authorize(principal, 'scripts:write', ws(c));
    const version = await createScript(deps.store, deps.clock, ws(c), principal.username, await readJsonBody(c));
    return c.text(version.hash, 201);
  });

  r.get('/scripts/list', async (c) => {
    authorize(c.get('principal'), 'scripts:read', ws(c));
    return c.json((await deps.store.listLatestScripts(ws(c))).map(scriptSummary));
  });

  r.get('/scripts/get/p/:path{.+}', async (c) => {
    authorize(c.get('principal'), 'scripts:read', ws(c));
    return c.json(await getScriptByPath(deps.store, ws(c), c.req.param('path')));
  });

  r.get('/scripts/get/h/:hash', async (c) => {
    authorize(c.get('principal'), 'scripts:read', ws(c));
    return c.json(await getScriptByHash(deps.store, ws(c), c.req.param('hash')));
  });

  r.post('/scripts/delete/p/:path{.+}', async (c) => {
    authorize(c.get('principal'), 'scripts:write', ws(c));
    await deleteScript(deps.store, ws(c), c.req.param('path'));
    return c.text(`deleted ${c.req.param('path')}`);
  });

  return r;
}
