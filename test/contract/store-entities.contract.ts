import { describe, expect, it } from 'vitest';
import type { Entity, Store } from '../../functions/ports.js';
import { aJob, anEntity, nextTimestamp, uid } from './store-fixtures.js';

/**
 * The Store contract for workspace documents (members, groups, folders, resources, resource types,
 * variables), part of describeStoreContract: versioned JSON values whose replaces cannot lose a
 * concurrent change.
 */
export function describeEntityContract(getStore: () => Store, newWorkspace: () => Promise<string>) {
  describe('entities', () => {
    /** The replace a read-modify-write makes: the next version, with a new value. */
    const nextVersion = (e: Entity, value: Record<string, unknown>): Entity => ({ ...e, value, version: e.version + 1, updated_at: nextTimestamp() });

    it('creates an entity once; a second create reports false and changes nothing', async () => {
      const store = getStore();
      const e = anEntity('resource', await newWorkspace(), 'u/alice/db');
      expect(await store.createEntity(e)).toBe(true);
      expect(await store.createEntity({ ...e, value: { other: true }, version: 7 })).toBe(false);
      expect(await store.getEntity('resource', e.workspace_id, e.key)).toEqual(e);
      expect(await store.getEntity('resource', e.workspace_id, 'u/alice/none')).toBeNull();
    });

    it('keeps kinds and workspaces apart', async () => {
      const store = getStore();
      const [ws, other] = [await newWorkspace(), await newWorkspace()];
      const member = anEntity('member', ws, 'alice', { value: { role: 'admin' } });
      await store.createEntity(member);
      expect(await store.getEntity('group', ws, 'alice')).toBeNull();
      expect(await store.getEntity('member', other, 'alice')).toBeNull();
      expect(await store.listEntities('group', ws)).toEqual([]);
      expect(await store.listEntities('member', other)).toEqual([]);

      // The same key is free in another kind and another workspace.
      const group = anEntity('group', ws, 'alice', { value: { members: ['alice'] } });
      const elsewhere = anEntity('member', other, 'alice', { value: { role: 'viewer' } });
      expect(await store.createEntity(group)).toBe(true);
      expect(await store.createEntity(elsewhere)).toBe(true);
      expect(await store.getEntity('member', ws, 'alice')).toEqual(member);
      expect(await store.deleteEntity('group', ws, 'alice')).toBe(true);
      expect(await store.getEntity('member', ws, 'alice')).toEqual(member);
      expect(await store.getEntity('member', other, 'alice')).toEqual(elsewhere);
    });

    it('lists the entities of one kind in one workspace, ordered by key', async () => {
      const store = getStore();
      const [ws, other] = [await newWorkspace(), await newWorkspace()];
      const keys = ['u/bob/x', 'f/a/b', 'u/alice/y', 'f/a', 'f/a-b'];
      for (const key of keys) await store.createEntity(anEntity('variable', ws, key));
      await store.createEntity(anEntity('resource', ws, 'f/a/c'));
      await store.createEntity(anEntity('variable', other, 'f/a/c'));
      const listed = await store.listEntities('variable', ws);
      expect(listed.map((e) => e.key)).toEqual(['f/a', 'f/a-b', 'f/a/b', 'u/alice/y', 'u/bob/x']);
      expect(listed.every((e) => e.kind === 'variable' && e.workspace_id === ws)).toBe(true);
      expect(listed[0]).toEqual(await store.getEntity('variable', ws, 'f/a'));
    });

    it('lists every entity, however many pages the listing takes', async () => {
      const store = getStore();
      const ws = await newWorkspace();
      // 20 values of about 60 KB (each unit is 6 bytes of UTF-8): more than one 1 MB page of a
      // DynamoDB Query, while staying under the 64 KiB an entity value may take.
      const count = 20;
      const blob = (i: number) => `${i}:${'é✓x'.repeat(10_000)}`;
      for (let i = 0; i < count; i++) {
        const key = `f/big/${String(i).padStart(2, '0')}`;
        await store.createEntity(anEntity('resource', ws, key, { value: { i, blob: blob(i) } }));
      }
      const listed = await store.listEntities('resource', ws);
      expect(listed.map((e) => e.value.i)).toEqual([...Array(count).keys()]);
      expect(listed.every((e) => e.value.blob === blob(e.value.i as number))).toBe(true);
    });

    it('replaces with the expected version; a stale version changes nothing', async () => {
      const store = getStore();
      const e = anEntity('folder', await newWorkspace(), 'ops', { value: { owners: ['alice'] } });
      await store.createEntity(e);
      const v2 = nextVersion(e, { owners: ['alice', 'bob'], extra: { on: false } });
      expect(await store.replaceEntity(v2, 1)).toBe(true);
      expect(await store.getEntity('folder', e.workspace_id, e.key)).toEqual(v2);

      // A writer that read version 1 lost the race.
      expect(await store.replaceEntity(nextVersion(e, { owners: [] }), 1)).toBe(false);
      expect(await store.getEntity('folder', e.workspace_id, e.key)).toEqual(v2);

      const v3 = nextVersion(v2, { owners: ['carol'] });
      expect(await store.replaceEntity(v3, 2)).toBe(true);
      expect(await store.getEntity('folder', e.workspace_id, e.key)).toEqual(v3);
    });

    it("tells which write is stored (its version and times) without the value, and nothing for a missing one", async () => {
      const store = getStore();
      const e = anEntity('flow_run', await newWorkspace(), uid('job'), { value: { results: { s0: 'hello' } } });
      const stampOf = (x: Entity) => ({ version: x.version, created_at: x.created_at, updated_at: x.updated_at });
      expect(await store.getEntityStamp('flow_run', e.workspace_id, e.key)).toBeNull();
      await store.createEntity(e);
      expect(await store.getEntityStamp('flow_run', e.workspace_id, e.key)).toEqual(stampOf(e));
      const v2 = nextVersion(e, { results: {} });
      await store.replaceEntity(v2, 1);
      expect(await store.getEntityStamp('flow_run', e.workspace_id, e.key)).toEqual(stampOf(v2));
      expect(await store.getEntityStamp('resource', e.workspace_id, e.key)).toBeNull();
      await store.deleteEntity('flow_run', e.workspace_id, e.key);
      expect(await store.getEntityStamp('flow_run', e.workspace_id, e.key)).toBeNull();
    });

    it('stores the jobs a create or replace names only when it is stored itself', async () => {
      const store = getStore();
      const ws = await newWorkspace();
      const e = anEntity('flow_run', ws, uid('flow'));
      const [first, second, lost, taken] = [aJob(ws, { status: 'running', attempts: 1 }), aJob(ws), aJob(ws), aJob(ws)];
      expect(await store.createEntity(e, [], [first])).toBe(true);
      expect(await store.getJob(ws, first.id)).toMatchObject({ id: first.id, status: 'running' });
      expect(await store.createEntity(e, [], [taken])).toBe(false);
      expect(await store.getJob(ws, taken.id)).toBeNull();

      const v2 = nextVersion(e, { index: 1 });
      expect(await store.replaceEntity(v2, 1, [], [second])).toBe(true);
      expect(await store.getJob(ws, second.id)).toMatchObject({ id: second.id, status: 'queued' });
      // A replace that lost the race stores none of its jobs.
      expect(await store.replaceEntity(nextVersion(e, { index: 9 }), 1, [], [lost])).toBe(false);
      expect(await store.getJob(ws, lost.id)).toBeNull();
    });

    it('lets exactly one of two concurrent replaces of the same version win', async () => {
      const store = getStore();
      const e = anEntity('group', await newWorkspace(), 'devs', { value: { members: [] } });
      await store.createEntity(e);
      const [a, b] = [nextVersion(e, { members: ['a'] }), nextVersion(e, { members: ['b'] })];
      const results = await Promise.all([store.replaceEntity(a, 1), store.replaceEntity(b, 1)]);
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.getEntity('group', e.workspace_id, e.key)).toEqual(results[0] ? a : b);
    });

    it('refuses to replace a missing entity, creating nothing', async () => {
      const store = getStore();
      const e = anEntity('resource_type', await newWorkspace(), 'postgresql');
      expect(await store.replaceEntity({ ...e, version: 2 }, 1)).toBe(false);
      expect(await store.getEntity('resource_type', e.workspace_id, e.key)).toBeNull();
      expect(await store.listEntities('resource_type', e.workspace_id)).toEqual([]);
    });

    it('deletes an entity once: true, then false', async () => {
      const store = getStore();
      const e = anEntity('variable', await newWorkspace(), 'u/alice/token');
      await store.createEntity(e);
      expect(await store.deleteEntity('variable', e.workspace_id, e.key)).toBe(true);
      expect(await store.getEntity('variable', e.workspace_id, e.key)).toBeNull();
      expect(await store.listEntities('variable', e.workspace_id)).toEqual([]);
      expect(await store.deleteEntity('variable', e.workspace_id, e.key)).toBe(false);
      expect(await store.deleteEntity('variable', e.workspace_id, uid('never'))).toBe(false);
      // The key is free again.
      expect(await store.createEntity(e)).toBe(true);
    });

    it('round-trips any JSON value exactly', async () => {
      const store = getStore();
      const value = {
        zeta: 'keys not in alphabetical order',
        alpha: { nested: { deeper: [1, [2, [3, { four: 4 }]]] }, empty: {}, list: [] },
        numbers: [0, -1, 3.5, 0.1, 1e-7, 12345678901, Number.MAX_SAFE_INTEGER, -2.5e300, 1.7976931348623157e308],
        booleans: [true, false],
        nothing: null,
        blank: '',
        blanks: ['', ' ', '\n'],
        unicode: 'ünïcødé ✓ 日本語 😀 e\u0301 \u0000 \u2028 "quoted" \\ back',
        '': 'empty key',
        'a.b#c/d': 'odd key',
        mixed: [null, '', 0, false, {}, [], { a: null }],
      };
      const e = anEntity('resource', await newWorkspace(), 'u/alice/json', { value });
      await store.createEntity(e);
      const got = await store.getEntity('resource', e.workspace_id, e.key);
      expect(got).toEqual(e);
      // toEqual ignores key order; the JSON text does not.
      expect(JSON.stringify(got?.value)).toBe(JSON.stringify(value));
      const [listed] = await store.listEntities('resource', e.workspace_id);
      expect(JSON.stringify(listed.value)).toBe(JSON.stringify(value));

      const replaced = nextVersion(e, { ...value, zeta: 'changed' });
      await store.replaceEntity(replaced, 1);
      expect(JSON.stringify((await store.getEntity('resource', e.workspace_id, e.key))?.value)).toBe(JSON.stringify(replaced.value));
    });
  });
}
