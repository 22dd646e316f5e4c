import { Hono } from 'hono';
import { createWorkspace, listWorkspacesOf, setObjectStorage } from '../core/workspace/workspaces.js';
import { getJobLimits, setJobLimits } from '../core/workspace/job-limits-setting.js';
import { addMember, listMembers, removeMember, updateMember } from '../core/identity/members.js';
import { getSyncKey, setSyncKey } from '../core/workspace/sync-key.js';
import { getErrorHandler, setErrorHandler } from '../core/workspace/workspace-error-handler.js';
import { webhookView } from '../core/events/webhook-settings.js';
import { getRoutePrefix, setRoutePrefix } from '../core/triggers/route-prefix.js';
import type { CoreDeps } from '../core/deps.js';
import type { WorkspaceSettingsView } from '../core/views/settings-views.js';
import type { Same } from '../core/views/same.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';
import { listQueryOf, pageQuery, pageOf } from './list-query.js';

export function workspaceRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();

  r.post('/workspaces/create', async (c) => {
    const ws = await createWorkspace(deps.store, deps.clock, c.get('principal'), await readJsonBody(c));
    return c.text(ws.id, 201);
  });

  r.get('/workspaces/list', async (c) => c.json(await listWorkspacesOf(deps.store, c.get('principal'))));

  return r;
}

/** Settings and members of one workspace. */
export function workspaceMemberRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();

  r.get('/workspaces/get_settings', async (c) => {
    const rights = c.get('rights').check('workspaces', 'read');
    // The webhook's URL and whether it signs, never its secret; the URL to admins only, as a
    // receiver's URL often carries a token of its own (chat webhooks do).
    const webhook: Partial<Awaited<ReturnType<typeof webhookView>>> = rights.can('workspaces', 'write') ? await webhookView(deps, c.get('workspace').id) : {};
    const handler = await getErrorHandler(deps, c.get('workspace').id);
    // The handler's extra arguments likewise (a channel's webhook URL, a key): to admins only, `{}` to others.
    const extraArgs = rights.can('workspaces', 'write') ? (handler?.extra_args ?? {}) : {};
    const answer = { ...c.get('workspace'), ...webhook, error_handler: handler ? { path: handler.path, extra_args: extraArgs } : null };
    // The answer is what the API document says it is (core/views/settings-views.ts), or this fails to compile.
    const described: Same<typeof answer, WorkspaceSettingsView> = true;
    void described;
    return c.json(answer);
  });
  // The workspace error handler (docs/flows.md): runs for every failed job and flow of the workspace.
  r.post('/workspaces/edit_error_handler', async (c) => c.json(await setErrorHandler(deps, c.get('rights'), await readJsonBody(c))));
  // The workspace's own job limits, each at most the instance's (README: Job confinement).
  r.get('/workspaces/job_limits', async (c) => {
    c.get('rights').check('workspaces', 'read');
    return c.json(await getJobLimits(deps.store, c.get('rights').workspaceId));
  });
  r.post('/workspaces/job_limits', async (c) => c.json(await setJobLimits(deps, c.get('rights'), await readJsonBody(c))));
  // Where the workspace's HTTP routes are served; only an instance admin assigns a custom prefix.
  r.get('/workspaces/route_prefix', async (c) => c.json(await getRoutePrefix(deps, c.get('rights'))));
  r.post('/workspaces/route_prefix', async (c) => c.json(await setRoutePrefix(deps, c.get('principal'), c.get('workspace').id, await readJsonBody(c))));
  r.post('/workspaces/edit_object_storage', async (c) => c.json(await setObjectStorage(deps.store, c.get('rights'), await readJsonBody(c))));
  // The key secrets pulled by the CLI are encrypted with (admins only; svc.yaml includeKey).
  r.get('/workspaces/encryption_key', async (c) => c.json(await getSyncKey(deps, c.get('rights'))));
  r.post('/workspaces/encryption_key', async (c) => c.json(await setSyncKey(deps, c.get('rights'), await readJsonBody(c))));

  r.get('/users/list', async (c) => {
    const q = listQueryOf(c, pageQuery);
    return c.json(pageOf(await listMembers(deps, c.get('rights')), q));
  });
  r.post('/workspaces/add_user', async (c) => c.json(await addMember(deps, c.get('rights'), await readJsonBody(c)), 201));
  r.post('/workspaces/remove_user', async (c) => {
    await removeMember(deps, c.get('rights'), await readJsonBody(c));
    return c.text('removed');
  });
  r.post('/users/update/:username', async (c) => c.json(await updateMember(deps, c.get('rights'), c.req.param('username'), await readJsonBody(c))));

  return r;
}
