import { Hono } from 'hono';
import { addGroupMember, createGroup, deleteGroup, getGroup, listGroups, removeGroupMember } from '../core/identity/groups.js';
import { createFolder, deleteFolder, getFolder, listFolders, updateFolder } from '../core/identity/folders.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';
import { listQueryOf, pageQuery, pageOf } from './list-query.js';

/** Groups and folders of a workspace (the principals and containers that rights refer to). */
export function groupFolderRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();

  r.post('/groups/create', async (c) => c.json(await createGroup(deps, c.get('rights'), await readJsonBody(c)), 201));
  r.get('/groups/list', async (c) => {
    const q = listQueryOf(c, pageQuery);
    return c.json(pageOf(await listGroups(deps, c.get('rights')), q));
  });
  r.get('/groups/get/:name', async (c) => c.json(await getGroup(deps, c.get('rights'), c.req.param('name'))));
  r.post('/groups/adduser/:name', async (c) => c.json(await addGroupMember(deps, c.get('rights'), c.req.param('name'), await readJsonBody(c))));
  r.post('/groups/removeuser/:name', async (c) => c.json(await removeGroupMember(deps, c.get('rights'), c.req.param('name'), await readJsonBody(c))));
  r.delete('/groups/delete/:name', async (c) => {
    await deleteGroup(deps, c.get('rights'), c.req.param('name'));
    return c.text(`deleted group ${c.req.param('name')}`);
  });

  r.post('/folders/create', async (c) => c.json(await createFolder(deps, c.get('rights'), await readJsonBody(c)), 201));
  r.get('/folders/list', async (c) => {
    const q = listQueryOf(c, pageQuery);
    return c.json(pageOf(await listFolders(deps, c.get('rights')), q));
  });
  r.get('/folders/get/:name', async (c) => c.json(await getFolder(deps, c.get('rights'), c.req.param('name'))));
  r.post('/folders/update/:name', async (c) => c.json(await updateFolder(deps, c.get('rights'), c.req.param('name'), await readJsonBody(c))));
  r.delete('/folders/delete/:name', async (c) => {
    await deleteFolder(deps, c.get('rights'), c.req.param('name'));
    return c.text(`deleted folder ${c.req.param('name')}`);
  });

  return r;
}
