import { Hono } from 'hono';
import { z } from 'zod';
import { appHistory, createApp, deleteApp, getApp, getAppVersion, listApps, updateApp } from '../core/workspace/apps.js';
import { parseBody } from '../core/common/validation.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';
import { listQueryOf, pageQuery, pageOf } from './list-query.js';

const versionId = z.object({ id: z.coerce.number().int().positive() });

/** Apps, stored and versioned (core/workspace/apps.ts), in the shapes of Windmill's app API. */
export function appRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();
  r.post('/apps/create', async (c) => c.text((await createApp(deps, c.get('rights'), await readJsonBody(c))).path, 201));
  r.post('/apps/update/:path{.+}', async (c) => c.json(await updateApp(deps, c.get('rights'), c.req.param('path'), await readJsonBody(c))));
  r.get('/apps/get/p/:path{.+}', async (c) => c.json(await getApp(deps, c.get('rights'), c.req.param('path'))));
  r.get('/apps/get/v/:id', async (c) => c.json(await getAppVersion(deps, c.get('rights'), parseBody(versionId, { id: c.req.param('id') }).id)));
  r.get('/apps/history/p/:path{.+}', async (c) => c.json(await appHistory(deps, c.get('rights'), c.req.param('path'))));
  r.get('/apps/list', async (c) => {
    const q = listQueryOf(c, pageQuery);
    return c.json(pageOf(await listApps(deps, c.get('rights')), q));
  });
  r.delete('/apps/delete/:path{.+}', async (c) => {
    await deleteApp(deps, c.get('rights'), c.req.param('path'));
    return c.text(`deleted app ${c.req.param('path')}`);
  });
  return r;
}
