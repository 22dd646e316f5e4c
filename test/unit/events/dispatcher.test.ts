import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { MemoryStore } from '../../../functions/adapters/memory/memory-store.js';
import { AesSecretCipher } from '../../../functions/adapters/local/aes-secret-cipher.js';
import { dispatchDue, type DispatchDeps } from '../../../functions/core/events/dispatcher.js';
import { redeliver } from '../../../functions/core/events/deliveries.js';
import { setWebhook } from '../../../functions/core/events/webhook-settings.js';
import type { OutboxEvent, WebhookRequest, WebhookResponse } from '../../../functions/ports.js';

/** The dispatcher's rules on the in-memory store, with a receiver that answers as told and a clock the test moves. */

function setup(answer: (req: WebhookRequest) => WebhookResponse) {
  let now = new Date('2026-01-01T00:00:00Z');
  const sent: Array<{ id: string; item: string }> = [];
  const deps: DispatchDeps = {
    store: new MemoryStore(),
    clock: { now: () => now },
    cipher: new AesSecretCipher(randomBytes(32)),
    retry: { firstMs: 1000, maxMs: 8000, giveUpAfterMs: 60_000, timeoutMs: 500 },
    sender: {
      post: async (req) => {
        const body = JSON.parse(req.body);
        sent.push({ id: req.headers['webhook-id'], item: body.subject });
        return answer(req);
      },
    },
  };
  let n = 0;
  const event = (item: string): OutboxEvent => ({ id: `evt_${String(++n).padStart(6, '0')}`, scope: 'ws', item: `folder:${item}`, type: 'UpdateFolder', body: JSON.stringify({ subject: item }), created_at: now.toISOString() });
  return { deps, sent, event, advance: (ms: number) => (now = new Date(now.getTime() + ms)) };
}

describe('the webhook dispatcher', () => {
  it('holds back an item behind its failing event, lets other items through, and keeps the order once it succeeds', async () => {
    let failing = true;
    const t = setup((req) => ({ status: failing && JSON.parse(req.body).subject === 'a' ? 500 : 200 }));
    await setWebhook(t.deps, 'ws', 'admin', 'https://example.com/hook', undefined);
    const [a1, a2, b1] = [t.event('a'), t.event('a'), t.event('b')];
    await t.deps.store.insertDeliveries([a1, a2, b1]);

    const first = await dispatchDue(t.deps);
    expect(t.sent.map((s) => s.id)).toEqual([a1.id, b1.id]);
    expect(first).toMatchObject({ delivered: 1, failed: 0 });
    expect(first.nextDueAt).not.toBeNull();

    // Not due yet: nothing is sent, a2 still waits behind a1.
    await dispatchDue(t.deps);
    expect(t.sent).toHaveLength(2);

    failing = false;
    t.advance(1000);
    await dispatchDue(t.deps);
    expect(t.sent.map((s) => s.id)).toEqual([a1.id, b1.id, a1.id, a2.id]);
    const a1Log = await t.deps.store.getDelivery('ws', a1.id);
    expect(a1Log).toMatchObject({ status: 'delivered', attempt_count: 2 });
    expect(a1Log!.attempts.map((a) => a.status_code)).toEqual([500, 200]);
  });

  it('gives up once the retry window has passed, and then lets the item\'s next event go', async () => {
    const t = setup((req) => ({ status: JSON.parse(req.body).subject === 'a' && req.headers['webhook-id'] === 'evt_000001' ? 503 : 200 }));
    await setWebhook(t.deps, 'ws', 'admin', 'https://example.com/hook', undefined);
    const [a1, a2] = [t.event('a'), t.event('a')];
    await t.deps.store.insertDeliveries([a1, a2]);
    for (let i = 0; i < 30; i++) {
      await dispatchDue(t.deps);
      t.advance(8000);
    }
    expect(await t.deps.store.getDelivery('ws', a1.id)).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(await t.deps.store.getDelivery('ws', a2.id)).toMatchObject({ status: 'delivered' });
  });

  it('marks events of a scope whose webhook was turned off as failed, sending nothing', async () => {
    const t = setup(() => ({ status: 200 }));
    const e = t.event('a');
    await t.deps.store.insertDeliveries([e]);
    await dispatchDue(t.deps);
    expect(t.sent).toEqual([]);
    expect(await t.deps.store.getDelivery('ws', e.id)).toMatchObject({ status: 'failed', attempts: [{ status_code: null, error: 'the webhook was turned off' }] });
  });

  it('does not send an attempt another dispatcher has claimed', async () => {
    const t = setup(() => ({ status: 200 }));
    await setWebhook(t.deps, 'ws', 'admin', 'https://example.com/hook', undefined);
    await t.deps.store.insertDeliveries([t.event('a')]);
    await Promise.all([dispatchDue(t.deps), dispatchDue(t.deps)]);
    expect(t.sent).toHaveLength(1);
  });

  it('redelivers an event even when the dispatcher records an attempt between the read and the write', async () => {
    const t = setup(() => ({ status: 500 }));
    await setWebhook(t.deps, 'ws', 'admin', 'https://example.com/hook', undefined);
    await t.deps.store.insertDeliveries([t.event('a')]);
    await dispatchDue(t.deps);
    const store = t.deps.store;
    const replace = store.replaceDelivery.bind(store);
    let interruptions = 3;
    // The dispatcher's attempt (a retry coming due on a loaded machine) lands just before the write.
    store.replaceDelivery = async (d, expectedVersion) => {
      if (interruptions > 0) {
        interruptions -= 1;
        const stored = (await store.getDelivery(d.scope, d.id))!;
        await replace({ ...stored, version: stored.version + 1 }, stored.version);
      }
      return replace(d, expectedVersion);
    };
    t.advance(3_600_000);
    const again = await redeliver(t.deps, 'ws', 'evt_000001');
    expect(interruptions).toBe(0);
    expect(again).toMatchObject({ id: 'evt_000001', status: 'pending', next_attempt_at: t.deps.clock.now().toISOString() });
    expect(await store.getDelivery('ws', 'evt_000001')).toMatchObject({ status: 'pending', next_attempt_at: t.deps.clock.now().toISOString() });
  });
});
