import { Hono } from 'hono';
import { editWorkspaceWebhook } from '../core/events/webhook-settings.js';
import { deliveryListQuery, listWorkspaceDeliveries, redeliverWorkspaceEvent } from '../core/events/deliveries.js';
import { editInstanceWebhook, getInstanceWebhook, listInstanceDeliveries, redeliverInstanceEvent } from '../core/events/instance-webhook.js';
import { parseBody } from '../core/validation.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { readJsonBody } from './json-body.js';

/** A workspace's webhook (spec 6.1): its URL and secret, and the delivery log with redelivery. */
export function workspaceWebhookRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();
  r.post('/workspaces/edit_webhook', async (c) => c.json(await editWorkspaceWebhook(deps, c.get('rights'), await readJsonBody(c))));
  r.get('/workspaces/webhook_deliveries', async (c) => {
    const { limit } = parseBody(deliveryListQuery, c.req.query());
    return c.json(await listWorkspaceDeliveries(deps, c.get('rights'), limit));
  });
  r.post('/workspaces/webhook_deliveries/:id/redeliver', async (c) => c.json(await redeliverWorkspaceEvent(deps, c.get('rights'), c.req.param('id'))));
  return r;
}

/** The instance events webhook (spec 6.2): instance admins only. */
export function instanceWebhookRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();
  r.get('/settings/instance_events_webhook', async (c) => c.json(await getInstanceWebhook(deps, c.get('principal'))));
  r.post('/settings/instance_events_webhook', async (c) => c.json(await editInstanceWebhook(deps, c.get('principal'), await readJsonBody(c))));
  r.get('/settings/instance_events_deliveries', async (c) => {
    const { limit } = parseBody(deliveryListQuery, c.req.query());
    return c.json(await listInstanceDeliveries(deps, c.get('principal'), limit));
  });
  r.post('/settings/instance_events_deliveries/:id/redeliver', async (c) => c.json(await redeliverInstanceEvent(deps, c.get('principal'), c.req.param('id'))));
  return r;
}
