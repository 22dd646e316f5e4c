import { Hono } from 'hono';
import { editWorkspaceWebhook } from '../core/events/webhook-settings.js';
import { deliveryListQuery, listWorkspaceDeliveries, redeliverWorkspaceEvent } from '../core/events/deliveries.js';
import { editInstanceWebhook, getInstanceWebhook, listInstanceDeliveries, redeliverInstanceEvent } from '../core/events/instance-webhook.js';
import { parseBody } from '../core/common/validation.js';
import { acceptInvite, cancelInvite, declineInvite, inviteUser, listMyInvites, listWorkspaceInvites } from '../core/identity/invites.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';

/** A workspace's webhook (spec 6.1): its URL and secret, the delivery log with redelivery; invitations (6.2). */
export function workspaceWebhookRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();
  r.post('/workspaces/edit_webhook', async (c) => c.json(await editWorkspaceWebhook(deps, c.get('rights'), await readJsonBody(c))));
  r.get('/workspaces/webhook_deliveries', async (c) => {
    const { limit } = parseBody(deliveryListQuery, c.req.query());
    return c.json(await listWorkspaceDeliveries(deps, c.get('rights'), limit));
  });
  r.post('/workspaces/invite_user', async (c) => c.json(await inviteUser(deps, c.get('rights'), await readJsonBody(c)), 201));
  r.get('/workspaces/list_pending_invites', async (c) => c.json(await listWorkspaceInvites(deps, c.get('rights'))));
  r.post('/workspaces/delete_invite', async (c) => {
    await cancelInvite(deps, c.get('rights'), await readJsonBody(c));
    return c.text('invitation deleted');
  });
  r.post('/workspaces/webhook_deliveries/:id/redeliver', async (c) => c.json(await redeliverWorkspaceEvent(deps, c.get('rights'), c.req.param('id'))));
  return r;
}

/** The instance events webhook (spec 6.2, instance admins only) and a user's own invitations. */
export function instanceWebhookRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();
  r.get('/settings/instance_events_webhook', async (c) => c.json(await getInstanceWebhook(deps, c.get('principal'))));
  r.post('/settings/instance_events_webhook', async (c) => c.json(await editInstanceWebhook(deps, c.get('principal'), await readJsonBody(c))));
  r.get('/settings/instance_events_deliveries', async (c) => {
    const { limit } = parseBody(deliveryListQuery, c.req.query());
    return c.json(await listInstanceDeliveries(deps, c.get('principal'), limit));
  });
  // The caller's own invitations (instance-wide: they name their workspace).
  r.get('/users/list_invites', async (c) => c.json(await listMyInvites(deps, c.get('principal'))));
  r.post('/users/accept_invite', async (c) => c.json(await acceptInvite(deps, c.get('principal'), await readJsonBody(c))));
  r.post('/users/decline_invite', async (c) => {
    await declineInvite(deps, c.get('principal'), await readJsonBody(c));
    return c.text('invitation declined');
  });
  r.post('/settings/instance_events_deliveries/:id/redeliver', async (c) => c.json(await redeliverInstanceEvent(deps, c.get('principal'), c.req.param('id'))));
  return r;
}
