import { describe, expect, it } from 'vitest';
import { CachedStore } from '../../../functions/core/store/cached-store.js';
import { MemoryStore } from '../../../functions/adapters/memory/memory-store.js';
import { aScriptVersion, aToken, aUser, aWorkspace, anEntity } from '../../contract/store-fixtures.js';
import type { Store } from '../../../functions/ports.js';

/**
 * The cache of the rows every request reads: a write through it takes effect on the next read at
 * once; a write it did not see (another process's) within the TTL. The clock is in the test's hand.
 */
function stores() {
  const inner = new MemoryStore();
  const clock = { ms: 0 };
  const cached = new CachedStore(inner, { ttlMs: 1000, now: () => clock.ms });
  return { inner, cached, clock };
}

describe('the cached store', () => {
  it('keeps a token for its TTL, so a second request reads nothing', async () => {
    const { inner, cached, clock } = stores();
    const token = aToken();
    await inner.putToken(token);
    expect(await cached.getToken(token.token_hash)).toMatchObject({ owner: token.owner });
    // Written behind the cache's back (another process): still the cached row within the TTL ...
    await inner.deleteToken(token.token_hash);
    clock.ms = 999;
    expect(await cached.getToken(token.token_hash)).not.toBeNull();
    // ... and gone after it.
    clock.ms = 1000;
    expect(await cached.getToken(token.token_hash)).toBeNull();
  });

  it('forgets a revoked token at once', async () => {
    const { cached } = stores();
    const token = aToken();
    await cached.putToken(token);
    expect(await cached.getToken(token.token_hash)).not.toBeNull();
    await cached.deleteToken(token.token_hash);
    expect(await cached.getToken(token.token_hash)).toBeNull();
  });

  it('does not keep a read that a revocation overtook', async () => {
    const inner = new MemoryStore();
    const token = aToken();
    await inner.putToken(token);
    // The first read answers only after the delete went through: its row is stale by then.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reads = 0;
    const slow: Store = Object.create(inner, {
      getToken: {
        value: async (hash: string) => {
          const row = await inner.getToken(hash);
          if (reads++ === 0) await gate;
          return row;
        },
      },
    });
    const cached = new CachedStore(slow, { ttlMs: 60_000, now: () => 0 });
    const racing = cached.getToken(token.token_hash);
    await cached.deleteToken(token.token_hash);
    release();
    expect(await racing).not.toBeNull();
    // The next request asks the store again, which no longer has it.
    expect(await cached.getToken(token.token_hash)).toBeNull();
  });

  it('does not keep unknown tokens, so a token created elsewhere works at once', async () => {
    const { inner, cached } = stores();
    const token = aToken();
    expect(await cached.getToken(token.token_hash)).toBeNull();
    await inner.putToken(token);
    expect(await cached.getToken(token.token_hash)).not.toBeNull();
  });

  it('sees a changed user and a changed workspace setting at once', async () => {
    const { cached } = stores();
    const user = aUser({ is_admin: true });
    await cached.createUser(user);
    expect((await cached.getUser(user.username))?.is_admin).toBe(true);
    await cached.updateUser({ ...user, is_admin: false });
    expect((await cached.getUser(user.username))?.is_admin).toBe(false);

    const ws = aWorkspace({ object_storage_enabled: false });
    await cached.createWorkspace(ws);
    expect((await cached.getWorkspace(ws.id))?.object_storage_enabled).toBe(false);
    await cached.setObjectStorage(ws.id, true);
    expect((await cached.getWorkspace(ws.id))?.object_storage_enabled).toBe(true);
  });

  it('sees new, replaced and deleted settings entities at once, and a lost replace reads again', async () => {
    const { inner, cached } = stores();
    const ws = 'ws1';
    expect(await cached.getEntity('job_limits', ws, 'limits')).toBeNull();
    const limits = anEntity('job_limits', ws, 'limits', { value: { memory_mb: 96 }, version: 1 });
    await cached.createEntity(limits);
    expect((await cached.getEntity('job_limits', ws, 'limits'))?.value).toEqual({ memory_mb: 96 });
    expect(await cached.listEntities('job_limits', ws)).toHaveLength(1);
    await cached.replaceEntity({ ...limits, value: { memory_mb: 128 }, version: 2 }, 1);
    expect((await cached.getEntity('job_limits', ws, 'limits'))?.value).toEqual({ memory_mb: 128 });

    // Another process moved it on: this process's replace loses, and its next read is fresh.
    await inner.replaceEntity({ ...limits, value: { memory_mb: 256 }, version: 3 }, 2);
    expect(await cached.replaceEntity({ ...limits, value: { memory_mb: 1 }, version: 3 }, 2)).toBe(false);
    expect((await cached.getEntity('job_limits', ws, 'limits'))?.value).toEqual({ memory_mb: 256 });

    await cached.deleteEntity('job_limits', ws, 'limits');
    expect(await cached.getEntity('job_limits', ws, 'limits')).toBeNull();
    expect(await cached.listEntities('job_limits', ws)).toEqual([]);
  });

  it('runs a new version of a path at once, and nothing once the path is deleted', async () => {
    const { cached } = stores();
    const v1 = aScriptVersion('ws1', 'u/a/s', { content: 'one' });
    await cached.insertScriptVersion(v1, null);
    expect((await cached.getLatestScript('ws1', 'u/a/s'))?.content).toBe('one');
    const v2 = aScriptVersion('ws1', 'u/a/s', { content: 'two', parent_hash: v1.hash });
    await cached.insertScriptVersion(v2, v1.hash);
    expect((await cached.getLatestScript('ws1', 'u/a/s'))?.content).toBe('two');
    await cached.deleteScriptPath('ws1', 'u/a/s');
    expect(await cached.getLatestScript('ws1', 'u/a/s')).toBeNull();
  });

  it('never keeps run state, which other processes move on', async () => {
    const { inner, cached } = stores();
    const run = anEntity('flow_run', 'ws1', 'job-1', { value: { step: 1 } });
    await inner.createEntity(run);
    expect((await cached.getEntity('flow_run', 'ws1', 'job-1'))?.value).toEqual({ step: 1 });
    await inner.replaceEntity({ ...run, value: { step: 2 }, version: run.version + 1 }, run.version);
    expect((await cached.getEntity('flow_run', 'ws1', 'job-1'))?.value).toEqual({ step: 2 });
  });

  it('hands out frozen rows, so no caller can change what the next request reads', async () => {
    const { cached } = stores();
    const user = aUser();
    await cached.createUser(user);
    const read = (await cached.getUser(user.username))!;
    expect(() => {
      (read as { is_admin: boolean }).is_admin = !read.is_admin;
    }).toThrow(TypeError);
  });
});
