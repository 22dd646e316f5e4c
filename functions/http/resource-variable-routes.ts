import { Hono } from 'hono';
import { createResource, deleteResource, getResource, listResources, updateResource } from '../core/workspace/resources.js';
import { createResourceType, deleteResourceType, getResourceType, listResourceTypes, updateResourceType } from '../core/workspace/resource-types.js';
import { createVariable, deleteVariable, getVariable, getVariableSealed, listVariables, updateVariable } from '../core/workspace/variables.js';
import { BindingError, interpolate } from '../core/workspace/bindings.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';
import { listQueryOf, pageOf, pageQuery, queryFlag, resourceListQuery } from './list-query.js';

/** Connections (resources), their types, and variables (spec 4.6). */
export function resourceVariableRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();

  r.post('/resources/type/create', async (c) => c.json(await createResourceType(deps, c.get('rights'), await readJsonBody(c)), 201));
  r.get('/resources/type/list', async (c) => c.json(await listResourceTypes(deps, c.get('rights'))));
  r.get('/resources/type/get/:name', async (c) => c.json(await getResourceType(deps, c.get('rights'), c.req.param('name'))));
  r.post('/resources/type/update/:name', async (c) => c.json(await updateResourceType(deps, c.get('rights'), c.req.param('name'), await readJsonBody(c))));
  r.delete('/resources/type/delete/:name', async (c) => {
    await deleteResourceType(deps, c.get('rights'), c.req.param('name'));
    return c.text(`deleted resource type ${c.req.param('name')}`);
  });

  r.post('/resources/create', async (c) => c.text((await createResource(deps, c.get('rights'), await readJsonBody(c))).path, 201));
  r.get('/resources/list', async (c) => {
    const q = listQueryOf(c, resourceListQuery);
    return c.json(pageOf(await listResources(deps, c.get('rights'), q.resource_type), q));
  });
  r.get('/resources/get/:path{.+}', async (c) => c.json(await getResource(deps, c.get('rights'), c.req.param('path'))));
  // What client libraries call: the value with its `$var:`/`$res:` references resolved as the caller.
  r.get('/resources/get_value_interpolated/:path{.+}', async (c) => {
    const resource = await getResource(deps, c.get('rights'), c.req.param('path'));
    try {
      return c.json(await interpolate(deps, c.get('rights'), resource.value, 1));
    } catch (e) {
      throw e instanceof BindingError ? e.toApiError() : e;
    }
  });
  r.post('/resources/update/:path{.+}', async (c) => c.json(await updateResource(deps, c.get('rights'), c.req.param('path'), await readJsonBody(c))));
  r.delete('/resources/delete/:path{.+}', async (c) => {
    await deleteResource(deps, c.get('rights'), c.req.param('path'));
    return c.text(`deleted resource ${c.req.param('path')}`);
  });

  r.post('/variables/create', async (c) => c.text((await createVariable(deps, c.get('rights'), await readJsonBody(c))).path, 201));
  r.get('/variables/list', async (c) => {
    const q = listQueryOf(c, pageQuery);
    return c.json(pageOf(await listVariables(deps, c.get('rights')), q));
  });
  r.get('/variables/get/:path{.+}', async (c) => {
    // ?encrypted=true: sealed with the workspace sync key, as the CLI pulls secrets.
    const get = queryFlag(c, 'encrypted') ? getVariableSealed : getVariable;
    return c.json(await get(deps, c.get('rights'), c.req.param('path')));
  });
  r.post('/variables/update/:path{.+}', async (c) => c.json(await updateVariable(deps, c.get('rights'), c.req.param('path'), await readJsonBody(c))));
  r.delete('/variables/delete/:path{.+}', async (c) => {
    await deleteVariable(deps, c.get('rights'), c.req.param('path'));
    return c.text(`deleted variable ${c.req.param('path')}`);
  });

  return r;
}
