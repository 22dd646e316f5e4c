import { requireInstanceAdmin, type Principal } from '../identity/auth.js';
import { parseBody } from '../common/validation.js';
import { INSTANCE_SCOPE } from './event-types.js';
import { editInstanceWebhookBody, setWebhook, webhookView } from './webhook-settings.js';
import { listScopeDeliveries, redeliver, type DeliveryView } from './deliveries.js';
import type { CoreDeps } from '../deps.js';

/** The instance events webhook (spec 6.2), set by instance admins; free here, not an enterprise feature. */

export async function getInstanceWebhook(deps: Pick<CoreDeps, 'store'>, principal: Principal): Promise<{ url: string; has_secret: boolean }> {
  requireInstanceAdmin(principal, 'read instance settings');
  const { webhook, has_secret } = await webhookView(deps, INSTANCE_SCOPE);
  return { url: webhook, has_secret };
}

export async function editInstanceWebhook(deps: Pick<CoreDeps, 'store' | 'clock' | 'cipher'>, principal: Principal, body: unknown): Promise<{ url: string; has_secret: boolean }> {
  requireInstanceAdmin(principal, 'change instance settings');
  const input = parseBody(editInstanceWebhookBody, body);
  await setWebhook(deps, INSTANCE_SCOPE, principal.username, input.url, input.secret);
  return getInstanceWebhook(deps, principal);
}

export async function listInstanceDeliveries(deps: Pick<CoreDeps, 'store'>, principal: Principal, limit: number): Promise<DeliveryView[]> {
  requireInstanceAdmin(principal, 'read instance event deliveries');
  return listScopeDeliveries(deps, INSTANCE_SCOPE, limit);
}

export async function redeliverInstanceEvent(deps: Pick<CoreDeps, 'store' | 'clock'>, principal: Principal, id: string): Promise<DeliveryView> {
  requireInstanceAdmin(principal, 'redeliver instance events');
  return redeliver(deps, INSTANCE_SCOPE, id);
}
