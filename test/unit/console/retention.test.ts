import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../functions/adapters/memory/memory-store.js';
import { pruneFinishedJobs, getRetention, setRetention } from '../../../functions/core/console/retention.js';
import { Rights } from '../../../functions/core/identity/permissions.js';
import type { Principal } from '../../../functions/core/identity/auth.js';
import type { Job } from '../../../functions/ports.js';
import { aJob } from '../../contract/store-fixtures.js';

/**
 * Retention (issue 22 item 5): finished jobs older than the workspace's max age lose their
 * arguments, logs and results, in chunks; newer and unfinished jobs, and workspaces without the
 * setting, keep theirs; only workspace admins change the setting, and a bad value is a 400.
 */

const NOW = new Date('2026-06-01T00:00:00Z');
const clock = { now: () => NOW };
const daysAgo = (d: number, plusMs = 0) => new Date(NOW.getTime() - d * 86_400_000 + plusMs).toISOString();
const admin: Principal = { username: 'root', isSuperadmin: true, workspaceId: null, scopes: null, via: 'token', jobId: null, tokenHash: null };

async function setup() {
  const store = new MemoryStore();
  for (const id of ['keep', 'prune']) await store.createWorkspace({ id, name: id, created_at: daysAgo(400), object_storage_enabled: false });
  const finished = (ws: string, age: number, i: number, status: Job['status'] = 'success'): Job =>
    aJob(ws, { created_at: daysAgo(age, i), status, completed_at: daysAgo(age, i + 1), result: { secret: i }, logs: `log ${i}`, args: { n: i } });
  const old: Job[] = [];
  for (let i = 0; i < 7; i++) old.push(finished('prune', 40, i, i % 3 === 0 ? 'failed' : i % 3 === 1 ? 'canceled' : 'success'));
  const recent = finished('prune', 5, 0);
  const oldQueued = aJob('prune', { created_at: daysAgo(50), args: { n: 99 } });
  const otherWorkspace = finished('keep', 40, 0);
  for (const j of [...old, recent, oldQueued, otherWorkspace]) await store.insertJob(j);
  const rights = await Rights.load({ store }, admin, 'prune');
  return { store, rights, old, recent, oldQueued, otherWorkspace };
}

describe('retention', () => {
  it('scrubs finished jobs past the max age in chunks and leaves everything else alone', async () => {
    const { store, rights, old, recent, oldQueued, otherWorkspace } = await setup();
    expect(await getRetention({ store }, rights)).toEqual({ max_age_days: null });
    expect((await pruneFinishedJobs({ store, clock }, { chunk: 2, maxPerPass: 100 })).scrubbed).toBe(0);

    expect(await setRetention({ store, clock }, rights, { max_age_days: 30 })).toEqual({ max_age_days: 30 });
    // A pass stops at its budget; the next goes on where the work is.
    expect((await pruneFinishedJobs({ store, clock }, { chunk: 2, maxPerPass: 4 })).scrubbed).toBe(4);
    expect((await pruneFinishedJobs({ store, clock }, { chunk: 2, maxPerPass: 4 })).scrubbed).toBe(3);
    expect((await pruneFinishedJobs({ store, clock }, { chunk: 2, maxPerPass: 4 })).scrubbed).toBe(0);

    for (const j of old) expect(await store.getJob('prune', j.id)).toMatchObject({ id: j.id, status: j.status, deleted: true, args: null, result: null, logs: '' });
    for (const [ws, j] of [['prune', recent], ['prune', oldQueued], ['keep', otherWorkspace]] as const) {
      expect(await store.getJob(ws, j.id)).toMatchObject({ deleted: false, args: j.args });
    }
  });

  it('keeps the newest max_count finished jobs, alone or with max_age_days, whichever prunes more', async () => {
    const { store, rights, old, recent, oldQueued, otherWorkspace } = await setup();
    // Newest first, the finished jobs of 'prune' are: recent, then old[6] .. old[0].
    expect(await setRetention({ store, clock }, rights, { max_count: 3 })).toEqual({ max_age_days: null, max_count: 3 });
    expect(await getRetention({ store }, rights)).toEqual({ max_age_days: null, max_count: 3 });
    expect((await pruneFinishedJobs({ store, clock }, { chunk: 2, maxPerPass: 100 })).scrubbed).toBe(5);
    const kept = [recent, old[6], old[5]];
    for (const j of kept) expect(await store.getJob('prune', j.id)).toMatchObject({ deleted: false, args: j.args });
    for (const j of old.slice(0, 5)) expect(await store.getJob('prune', j.id)).toMatchObject({ deleted: true, args: null, result: null, logs: '' });
    // The unfinished job does not count and is never scrubbed; another workspace is untouched.
    expect(await store.getJob('prune', oldQueued.id)).toMatchObject({ deleted: false, args: oldQueued.args });
    expect(await store.getJob('keep', otherWorkspace.id)).toMatchObject({ deleted: false });
    expect((await pruneFinishedJobs({ store, clock }, { chunk: 2, maxPerPass: 100 })).scrubbed).toBe(0);

    // A count that keeps more than the age allows: the age prunes (the old ones), the recent one stays.
    expect(await setRetention({ store, clock }, rights, { max_age_days: 30, max_count: 50 })).toEqual({ max_age_days: 30, max_count: 50 });
    expect((await pruneFinishedJobs({ store, clock }, { chunk: 2, maxPerPass: 100 })).scrubbed).toBe(2);
    expect(await store.getJob('prune', recent.id)).toMatchObject({ deleted: false });
    // A field left out keeps its value; null lifts the bound.
    expect(await setRetention({ store, clock }, rights, { max_count: null })).toEqual({ max_age_days: 30 });
  });

  it("scrubs a flow job's run with it: the run holds the flow's input and every step's result", async () => {
    const { store, rights } = await setup();
    const flow = aJob('prune', { kind: 'flow', created_at: daysAgo(40), status: 'success', completed_at: daysAgo(40, 5), args: { card: '4111' }, result: 'paid' });
    await store.insertJob(flow);
    const run = { flow_job: flow.id, flow_input: { card: '4111' }, results: { pay: 'paid with 4111' } };
    await store.createEntity({ kind: 'flow_run', workspace_id: 'prune', key: flow.id, value: run, version: 1, created_at: daysAgo(40), updated_at: daysAgo(40) });
    await setRetention({ store, clock }, rights, { max_age_days: 30 });
    await pruneFinishedJobs({ store, clock }, { chunk: 2, maxPerPass: 100 });
    expect(await store.getJob('prune', flow.id)).toMatchObject({ deleted: true, args: null, result: null });
    expect(await store.getEntity('flow_run', 'prune', flow.id)).toBeNull();
  });

  it('refuses a bad max_count with a 400 and keeps the setting', async () => {
    const { store, rights } = await setup();
    await setRetention({ store, clock }, rights, { max_count: 10 });
    for (const bad of [{ max_count: 0 }, { max_count: -5 }, { max_count: 1.5 }, { max_count: '10' }, { max_count: 100_001 }, {}]) {
      await expect(setRetention({ store, clock }, rights, bad), JSON.stringify(bad)).rejects.toMatchObject({ status: 400 });
    }
    expect(await getRetention({ store }, rights)).toEqual({ max_age_days: null, max_count: 10 });
  });

  it('lets only workspace admins change the setting, and refuses bad values', async () => {
    const { store, rights } = await setup();
    await expect(setRetention({ store, clock }, rights, { max_age_days: 0 })).rejects.toMatchObject({ status: 400 });
    await expect(setRetention({ store, clock }, rights, { max_age_days: '30' })).rejects.toMatchObject({ status: 400 });
    await expect(setRetention({ store, clock }, rights, { max_age_days: 30, extra: 1 })).rejects.toMatchObject({ status: 400 });
    await store.createEntity({ kind: 'member', workspace_id: 'prune', key: 'dev', value: { username: 'dev', role: 'developer', added_by: 'root' }, version: 1, created_at: daysAgo(1), updated_at: daysAgo(1) });
    const developer = await Rights.load({ store }, { ...admin, username: 'dev', isSuperadmin: false }, 'prune');
    await expect(setRetention({ store, clock }, developer, { max_age_days: 30 })).rejects.toMatchObject({ status: 403 });
    expect(await getRetention({ store }, developer)).toEqual({ max_age_days: null });
  });
});
