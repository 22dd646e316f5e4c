import { z } from 'zod';
import { conflict, notFound } from '../common/errors.js';
import { parseStoredJson } from '../documents/parse.js';
import { AGAIN, RACE, retry } from '../common/retry.js';
import type { CoreDeps } from '../deps.js';
import type { Rights } from '../identity/permissions.js';
import type { Delivery, DeliveryAttempt, DeliveryStatus } from '../../ports.js';

/** The delivery log of a scope's webhook (GET .../workspaces/webhook_deliveries) and redelivery. */

export interface DeliveryView {
  id: string;
  type: string;
  subject: string;
  status: DeliveryStatus;
  created_at: string;
  attempt_count: number;
  attempts: DeliveryAttempt[];
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  /** The CloudEvent as sent. */
  event: unknown;
}

export const deliveryListQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(100) });

export function deliveryView(d: Delivery): DeliveryView {
  const last = d.attempts.at(-1);
  const event = parseStoredJson(d.body, `event ${d.id}`, 'body') as { subject?: string };
  return {
    id: d.id,
    type: d.type,
    subject: event.subject ?? '',
    status: d.status,
    created_at: d.created_at,
    attempt_count: d.attempt_count,
    attempts: d.attempts,
    last_status_code: last?.status_code ?? null,
    last_error: last?.error ?? null,
    next_attempt_at: d.status === 'pending' ? d.next_attempt_at : null,
    event,
  };
}

export async function listScopeDeliveries(deps: Pick<CoreDeps, 'store'>, scope: string, limit: number): Promise<DeliveryView[]> {
  return (await deps.store.listDeliveries(scope, limit)).map(deliveryView);
}

export async function listWorkspaceDeliveries(deps: Pick<CoreDeps, 'store'>, rights: Rights, limit: number): Promise<DeliveryView[]> {
  // Admins only: the log shows what was sent, including the paths of items others may not read.
  rights.check('workspaces', 'write');
  return listScopeDeliveries(deps, rights.workspaceId, limit);
}

/**
 * The dispatcher writes a delivery at each attempt (its claim, then the answer); a redelivery that
 * loses to one of those reads it again rather than sending the user a 409 for the dispatcher's work.
 */
const REDELIVER_ATTEMPTS = 20;

/** Sends the event again from now on (a fresh retry schedule keeps its attempts in the log). */
export async function redeliver(deps: Pick<CoreDeps, 'store' | 'clock'>, scope: string, id: string): Promise<DeliveryView> {
  return retry({ attempts: REDELIVER_ATTEMPTS, ...RACE, exhausted: () => conflict(`delivery ${id} is being attempted right now; retry`) }, async () => {
    const d = await deps.store.getDelivery(scope, id);
    if (!d) throw notFound(`delivery ${id}`);
    const now = deps.clock.now().toISOString();
    // A redelivered event starts its retry window again: created_at is when its schedule began.
    const again: Delivery = { ...d, status: 'pending', next_attempt_at: now, created_at: now, version: d.version + 1 };
    return (await deps.store.replaceDelivery(again, d.version)) ? deliveryView(again) : AGAIN;
  });
}

export async function redeliverWorkspaceEvent(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, id: string): Promise<DeliveryView> {
  rights.check('workspaces', 'write');
  return redeliver(deps, rights.workspaceId, id);
}
