import { Hono } from 'hono';
import { createScript, deleteScript, getScriptByHash, getScriptByPath, listScripts } from '../core/scripts/scripts.js';
import type { CoreDeps } from '../core/deps.js';
import { scriptMetadata } from '../core/dependencies/lock-script.js';
import { inferSchemaForEditor } from '../core/scripts/script-preview.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';
import { listQueryOf, pageQuery, pageOf } from './list-query.js';

export function scriptRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();

  r.post('/scripts/create', async (c) => {
    const version = await createScript(deps, c.get('rights'), await readJsonBody(c));
    return c.text(version.hash, 201);
  });

  // The lock and schema a create would store, without creating a version (svc script generate-metadata).
  r.post('/scripts/generate_metadata', async (c) => c.json(await scriptMetadata(deps, c.get('rights'), await readJsonBody(c))));

  // The editor's live input form: the schema a save would infer, without the lock (no registry call).
  r.post('/scripts/infer_schema', async (c) => c.json(inferSchemaForEditor(c.get('rights'), await readJsonBody(c))));

  r.get('/scripts/list', async (c) => {
    const q = listQueryOf(c, pageQuery);
    return c.json(pageOf(await listScripts(deps.store, c.get('rights')), q));
  });
  r.get('/scripts/get/p/:path{.+}', async (c) => c.json(await getScriptByPath(deps.store, c.get('rights'), c.req.param('path'))));
  r.get('/scripts/get/h/:hash', async (c) => c.json(await getScriptByHash(deps.store, c.get('rights'), c.req.param('hash'))));

  r.post('/scripts/delete/p/:path{.+}', async (c) => {
    await deleteScript(deps, c.get('rights'), c.req.param('path'));
    return c.text(`deleted ${c.req.param('path')}`);
  });

  return r;
}
