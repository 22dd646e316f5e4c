import { errorText, log } from '../common/logger.js';
import { signedHeaders } from './signing.js';
import { nextAttemptAt, type RetrySchedule } from './retry-schedule.js';
import { webhookTarget, type WebhookTarget } from './webhook-settings.js';
import type { CoreDeps } from '../deps.js';
import type { Delivery, DeliveryAttempt, WebhookSender } from '../../ports.js';

/**
 * Delivers recorded events (the outbox) at least once, in order per item: an item's next event
 * waits until the one before it was delivered or given up. Each attempt is first claimed (the
 * delivery's `next_attempt_at` moves past the attempt's timeout, conditionally on its version), so
 * two dispatchers do not send the same attempt, and one killed mid-attempt leaves a delivery that
 * is simply due again once its claim runs out. Both shells call `dispatchDue`: locally a timer,
 * on AWS the events function (woken by the table's stream, and on a schedule).
 */

export type DispatchDeps = Pick<CoreDeps, 'store' | 'clock' | 'cipher'> & { retry: RetrySchedule; sender: WebhookSender };

/** The attempts a delivery keeps in its log; `attempt_count` still counts them all. */
const ATTEMPTS_KEPT = 20;
/** Items sent to at once. */
const CONCURRENCY = 8;
const BATCH = 200;

export interface DispatchReport {
  delivered: number;
  failed: number;
  /** The earliest next attempt among what is still pending, for a dispatcher deciding how long to sleep. */
  nextDueAt: Date | null;
}

export async function dispatchDue(deps: DispatchDeps): Promise<DispatchReport> {
  const pending = await deps.store.listPendingDeliveries(BATCH);
  const report: DispatchReport = { delivered: 0, failed: 0, nextDueAt: null };
  // Oldest first, grouped by item: each group is sent in order, groups side by side.
  const byItem = new Map<string, Delivery[]>();
  for (const d of pending) {
    const k = `${d.scope}\u0000${d.item}`;
    byItem.set(k, [...(byItem.get(k) ?? []), d]);
  }
  const groups = [...byItem.values()];
  const targets = new Map<string, Promise<WebhookTarget | null>>();
  const targetOf = (scope: string) => {
    if (!targets.has(scope)) targets.set(scope, webhookTarget(deps, scope));
    return targets.get(scope)!;
  };
  const noteNext = (at: string | null) => {
    if (at && (!report.nextDueAt || Date.parse(at) < report.nextDueAt.getTime())) report.nextDueAt = new Date(at);
  };
  const work = async (group: Delivery[]) => {
    for (const d of group) {
      if (d.next_attempt_at && Date.parse(d.next_attempt_at) > deps.clock.now().getTime()) {
        noteNext(d.next_attempt_at);
        return;
      }
      const outcome = await attempt(deps, d, await targetOf(d.scope));
      if (outcome.status === 'delivered') report.delivered += 1;
      else if (outcome.status === 'failed') report.failed += 1;
      if (outcome.status !== 'delivered' && outcome.status !== 'failed') {
        noteNext(outcome.next_attempt_at);
        return;
      }
    }
  };
  for (let i = 0; i < groups.length; i += CONCURRENCY) await Promise.all(groups.slice(i, i + CONCURRENCY).map(work));
  return report;
}

/** One attempt at one delivery; what it became (unchanged when another dispatcher holds it). */
async function attempt(deps: DispatchDeps, d: Delivery, target: WebhookTarget | null): Promise<Delivery> {
  const now = deps.clock.now();
  const claim: Delivery = { ...d, next_attempt_at: new Date(now.getTime() + 2 * deps.retry.timeoutMs).toISOString(), version: d.version + 1 };
  if (!(await deps.store.replaceDelivery(claim, d.version))) return d;
  const result = target ? await send(deps, d, target, now) : { status_code: null, error: 'the webhook was turned off' };
  const done = deps.clock.now();
  const entry: DeliveryAttempt = { at: done.toISOString(), ...result };
  const ok = result.status_code !== null && result.status_code >= 200 && result.status_code < 300;
  const next = ok || !target ? null : nextAttemptAt(deps.retry, new Date(d.created_at), d.attempt_count + 1, done);
  const outcome: Delivery = {
    ...claim,
    status: ok ? 'delivered' : next ? 'pending' : 'failed',
    attempt_count: d.attempt_count + 1,
    attempts: [...d.attempts, entry].slice(-ATTEMPTS_KEPT),
    next_attempt_at: next?.toISOString() ?? null,
    version: claim.version + 1,
  };
  // Lost only if someone redelivered it meanwhile: their version stands, this attempt still counted as sent.
  await deps.store.replaceDelivery(outcome, claim.version);
  if (!ok) log.warn('webhook delivery failed', { scope: d.scope, event: d.id, type: d.type, status_code: result.status_code, error: result.error, next_attempt_at: outcome.next_attempt_at });
  return outcome;
}

async function send(deps: DispatchDeps, d: Delivery, target: WebhookTarget, now: Date): Promise<{ status_code: number | null; error: string | null }> {
  try {
    const res = await deps.sender.post({ url: target.url, headers: signedHeaders(target.secret, d.id, now, d.body), body: d.body, timeoutMs: deps.retry.timeoutMs });
    if ('error' in res) return { status_code: null, error: res.error };
    return { status_code: res.status, error: res.status >= 200 && res.status < 300 ? null : `the receiver answered ${res.status}` };
  } catch (e) {
    return { status_code: null, error: errorText(e) };
  }
}
