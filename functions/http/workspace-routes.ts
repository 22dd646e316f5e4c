import { Hono } from 'hono';
import { authorize } from '../core/auth.js';
import { createWorkspace, setObjectStorage } from '../core/workspaces.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';

export function workspaceRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();

  r.post('/workspaces/create', async (c) => {
    authorize(c.get('principal'), 'workspace:create', null);
    const ws = await createWorkspace(deps.store, deps.clock, await readJsonBody(c));
    return c.text(ws.id, 201);
  });

  r.get('/workspaces/list', async (c) => {
    authorize(c.get('principal'), 'workspace:create', null);
    return c.json(await deps.store.listWorkspaces());
  });

  r.get('/w/:workspace/workspaces/get_settings', async (c) => {
    authorize(c.get('principal'), 'scripts:read', c.req.param('workspace'));
    return c.json(c.get('workspace'));
  });

  r.post('/w/:workspace/workspaces/edit_object_storage', async (c) => {
    authorize(c.get('principal'), 'workspace:admin', c.req.param('workspace'));
    return c.json(await setObjectStorage(deps.store, c.req.param('workspace'), await readJsonBody(c)));
  });

  return r;
}
