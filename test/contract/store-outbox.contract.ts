import { describe, expect, it } from 'vitest';
import type { OutboxEvent, Store } from '../../functions/ports.js';
import { anEntity, aScriptVersion, aToken, aUser, nextTimestamp, uid } from './store-fixtures.js';

/**
 * The outbox part of the Store contract: an event is recorded exactly when the write that carries
 * it changes something, in the same transaction; deliveries list oldest first while pending and
 * newest first per scope, and change only from the version they were read at.
 */
export function describeOutboxContract(getStore: () => Store, newWorkspace: () => Promise<string>) {
  let n = 0;
  const anEvent = (scope: string, type = 'CreateFolder'): OutboxEvent => ({
    // Ids sort by creation, as the core makes them.
    id: `evt_${String(Date.now()).padStart(14, '0')}${String(++n).padStart(6, '0')}`,
    scope,
    item: 'folder:f/x',
    type,
    body: JSON.stringify({ specversion: '1.0', type, subject: 'f/x' }),
    created_at: nextTimestamp(),
  });
  const ids = async (scope: string) => (await getStore().listDeliveries(scope, 100)).map((d) => d.id);

  describe('outbox', () => {
    it('records the events of an entity write with it, and none when the write changes nothing', async () => {
      const store = getStore();
      const ws = await newWorkspace();
      const created = anEvent(ws);
      expect(await store.createEntity(anEntity('folder', ws, 'x'), [created])).toBe(true);
      // Taken key, stale version, missing key: nothing written, so nothing announced.
      expect(await store.createEntity(anEntity('folder', ws, 'x'), [anEvent(ws)])).toBe(false);
      expect(await store.replaceEntity(anEntity('folder', ws, 'x', { version: 3 }), 2, [anEvent(ws)])).toBe(false);
      expect(await store.deleteEntity('folder', ws, 'missing', [anEvent(ws)])).toBe(false);
      const updated = anEvent(ws, 'UpdateFolder');
      expect(await store.replaceEntity(anEntity('folder', ws, 'x', { version: 2 }), 1, [updated])).toBe(true);
      const deleted = anEvent(ws, 'DeleteFolder');
      expect(await store.deleteEntity('folder', ws, 'x', [deleted])).toBe(true);
      expect(await ids(ws)).toEqual([deleted.id, updated.id, created.id]);
      const stored = await store.getDelivery(ws, created.id);
      expect(stored).toMatchObject({ ...created, status: 'pending', attempt_count: 0, attempts: [], next_attempt_at: null, version: 1 });
    });

    it('records the events of script, user and token writes with them', async () => {
      const store = getStore();
      const ws = await newWorkspace();
      const v = aScriptVersion(ws, 'u/a/s');
      const e1 = anEvent(ws, 'CreateScript');
      expect(await store.insertScriptVersion(v, null, [e1])).toBe(true);
      expect(await store.insertScriptVersion(aScriptVersion(ws, 'u/a/s'), null, [anEvent(ws)])).toBe(false);
      const e2 = anEvent(ws, 'DeleteScriptPath');
      expect(await store.deleteScriptPath(ws, 'u/a/s', [e2])).toBe(1);
      expect(await store.deleteScriptPath(ws, 'u/a/s', [anEvent(ws)])).toBe(0);
      const user = aUser();
      const e3 = anEvent(ws, 'UserAdded');
      expect(await store.createUser(user, [e3])).toBe(true);
      expect(await store.createUser(user, [anEvent(ws)])).toBe(false);
      const token = aToken({ owner: user.username });
      await store.putToken(token);
      const e4 = anEvent(ws, 'TokenExpiringSoon');
      expect(await store.markTokenExpiryNotice(token.token_hash, nextTimestamp(), [e4])).toBe(true);
      const e5 = anEvent(ws, 'TokenExpired');
      await store.deleteToken(token.token_hash, [e5]);
      await store.deleteToken(token.token_hash, [anEvent(ws)]);
      expect(await store.markTokenExpiryNotice(token.token_hash, nextTimestamp(), [anEvent(ws)])).toBe(false);
      expect(await ids(ws)).toEqual([e5, e4, e3, e2, e1].map((e) => e.id));
    });

    it('lists pending deliveries oldest first and replaces one only from the version read', async () => {
      const store = getStore();
      const scope = uid('scope');
      const [a, b] = [anEvent(scope), anEvent(scope)];
      await store.insertDeliveries([a, b]);
      const pending = (await store.listPendingDeliveries(1000)).filter((d) => d.scope === scope);
      expect(pending.map((d) => d.id)).toEqual([a.id, b.id]);
      const done = { ...pending[0], status: 'delivered' as const, attempt_count: 1, attempts: [{ at: nextTimestamp(), status_code: 200, error: null }], version: 2 };
      expect(await store.replaceDelivery(done, 1)).toBe(true);
      expect(await store.replaceDelivery({ ...done, version: 3 }, 1)).toBe(false);
      expect(await store.getDelivery(scope, a.id)).toEqual(done);
      const still = async () => (await store.listPendingDeliveries(1000)).filter((d) => d.scope === scope).map((d) => d.id);
      // DynamoDB's index follows the write shortly after.
      for (let i = 0; i < 50 && (await still()).length !== 1; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await still()).toEqual([b.id]);
      expect(await store.getDelivery(scope, 'evt_missing')).toBeNull();
      expect((await store.listDeliveries(scope, 1)).map((d) => d.id)).toEqual([b.id]);
    });
  });
}
