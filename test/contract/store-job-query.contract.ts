import { describe, expect, it } from 'vitest';
import type { Job, JobQuery, Store } from '../../functions/ports.js';
import { aJob, eventually, FAR_FUTURE, nextTimestamp } from './store-fixtures.js';

/**
 * The run list's query (Store.queryJobs): newest first by (created_at, id), each filter narrowing
 * it, args and result matched as JSON subsets, and a cursor that pages through without gaps or
 * repeats, the same in every store.
 */
export function describeJobQueryContract(getStore: () => Store, newWorkspace: () => Promise<string>) {
  describe('run list query', () => {
    async function seed() {
      const store = getStore();
      const ws = await newWorkspace();
      const a1 = aJob(ws, { script_path: 'f/ops/clean', created_by: 'alice', args: { env: 'prod', n: 1 }, created_at: nextTimestamp() });
      const b1 = aJob(ws, { script_path: 'f/data/load', created_by: 'bob', kind: 'flow', script_hash: null, flow_version: 1, args: { env: 'dev', tags: ['x'] }, created_at: nextTimestamp() });
      const a2 = aJob(ws, { script_path: 'f/ops/cleanup', created_by: 'alice', args: { env: 'prod', n: 2, deep: { k: true } }, created_at: nextTimestamp() });
      const u1 = aJob(ws, { script_path: 'u/bob/mine', created_by: 'bob', args: null, created_at: nextTimestamp() });
      // Two jobs in the same instant: the id decides their order.
      const same = nextTimestamp();
      const [s1, s2] = [aJob(ws, { script_path: 'f/ops/clean', created_by: 'carol', created_at: same }), aJob(ws, { script_path: 'f/ops/clean', created_by: 'carol', created_at: same })];
      for (const j of [a1, b1, a2, u1, s1, s2]) await store.insertJob(j);
      await store.insertJob(aJob(await newWorkspace(), { script_path: 'f/ops/clean', created_by: 'alice' }));
      await store.claimJob(a2.id, nextTimestamp(), FAR_FUTURE);
      await store.claimJob(b1.id, nextTimestamp(), FAR_FUTURE);
      await store.completeJob(b1.id, { status: 'success', result: { rows: 3, meta: { ok: true } }, logs: '' }, nextTimestamp());
      const sameOrder = [s1, s2].sort((x, y) => (x.id > y.id ? -1 : 1));
      return { store, ws, a1, b1, a2, u1, newestFirst: [...sameOrder, u1, a2, b1, a1] };
    }

    const ids = (jobs: Job[]) => jobs.map((j) => j.id);

    it('lists a workspace newest first and narrows by status, kind, user, path prefix and time', async () => {
      const { store, ws, a1, b1, a2, u1, newestFirst } = await seed();
      const q = (filter: Omit<JobQuery, 'workspace_id' | 'limit'>, limit = 50) => store.queryJobs({ workspace_id: ws, limit, ...filter });
      const all = await eventually(() => q({}), (l) => l.length === 6);
      expect(ids(all)).toEqual(ids(newestFirst));
      expect(all.find((j) => j.id === b1.id)).toEqual(await store.getJob(ws, b1.id));
      expect(ids(await q({ status: 'running' }))).toEqual([a2.id]);
      expect(ids(await q({ kind: 'flow' }))).toEqual([b1.id]);
      expect(ids(await q({ created_by: 'alice' }))).toEqual([a2.id, a1.id]);
      expect(ids(await q({ path_prefix: 'f/ops/clean' }))).toEqual(ids(newestFirst.filter((j) => j.script_path.startsWith('f/ops/clean'))));
      expect(ids(await q({ path_prefix: 'u/' }))).toEqual([u1.id]);
      expect(ids(await q({ path_prefix: 'f/ops/cleanup', created_by: 'alice' }))).toEqual([a2.id]);
      // An exact path: f/ops/clean is not f/ops/cleanup (the workspace home's "Last run" of one item).
      expect(ids(await q({ path: 'f/ops/clean' }))).toEqual(ids(newestFirst.filter((j) => j.script_path === 'f/ops/clean')));
      expect(ids(await q({ path: 'f/ops/clean' }, 1))).toEqual(ids(newestFirst.filter((j) => j.script_path === 'f/ops/clean').slice(0, 1)));
      expect(ids(await q({ path: 'f/ops/clean', path_prefix: 'f/ops/' }))).toEqual(ids(newestFirst.filter((j) => j.script_path === 'f/ops/clean')));
      expect(ids(await q({ path: 'f/ops' }))).toEqual([]);
      // created_after is inclusive, created_before exclusive.
      expect(ids(await q({ created_after: b1.created_at, created_before: u1.created_at }))).toEqual([a2.id, b1.id]);
      expect(ids(await q({ created_after: FAR_FUTURE }))).toEqual([]);
      expect(ids(await q({}, 2))).toEqual(ids(newestFirst.slice(0, 2)));
    });

    it('keeps what started each job and narrows by trigger', async () => {
      const store = getStore();
      const ws = await newWorkspace();
      const cli = aJob(ws, { trigger: 'cli', created_at: nextTimestamp() });
      const scheduled = aJob(ws, { trigger: 'schedule', schedule_path: 'f/jobs/nightly', created_at: nextTimestamp() });
      const step = aJob(ws, { trigger: 'flow', parent_job: cli.id, created_at: nextTimestamp() });
      // A job stored before triggers were recorded has none, and matches no trigger filter.
      const old = aJob(ws, { created_at: nextTimestamp() });
      for (const j of [cli, scheduled, step, old]) await store.insertJob(j);
      const q = (filter: Omit<JobQuery, 'workspace_id' | 'limit'>) => store.queryJobs({ workspace_id: ws, limit: 50, ...filter });
      await eventually(() => q({}), (l) => l.length === 4);
      expect(ids(await q({ trigger: 'cli' }))).toEqual([cli.id]);
      expect(ids(await q({ trigger: 'flow' }))).toEqual([step.id]);
      expect(ids(await q({ trigger: 'schedule', path_prefix: 'f/jobs/' }))).toEqual([scheduled.id]);
      expect(ids(await q({ trigger: 'webhook' }))).toEqual([]);
      expect((await store.getJob(ws, scheduled.id))?.trigger).toBe('schedule');
      expect((await store.getJob(ws, old.id))?.trigger ?? null).toBeNull();
    });

    it('matches args and result as JSON subsets', async () => {
      const { store, ws, a1, b1, a2 } = await seed();
      const q = (filter: Omit<JobQuery, 'workspace_id' | 'limit'>) => store.queryJobs({ workspace_id: ws, limit: 50, ...filter });
      await eventually(() => q({}), (l) => l.length === 6);
      expect(ids(await q({ args: { env: 'prod' } }))).toEqual([a2.id, a1.id]);
      expect(ids(await q({ args: { env: 'prod', n: 1 } }))).toEqual([a1.id]);
      expect(ids(await q({ args: { deep: { k: true } } }))).toEqual([a2.id]);
      expect(ids(await q({ args: { tags: ['x'] } }))).toEqual([b1.id]);
      // A string is not the number it spells, and a missing key does not match null.
      expect(ids(await q({ args: { n: '1' } }))).toEqual([]);
      expect(ids(await q({ args: { absent: null } }))).toEqual([]);
      expect(ids(await q({ result: { meta: { ok: true } } }))).toEqual([b1.id]);
      expect(ids(await q({ result: { rows: 4 } }))).toEqual([]);
      expect(ids(await q({ args: { env: 'prod' }, status: 'queued' }))).toEqual([a1.id]);
    });

    it('pages by cursor through every job once, in order', async () => {
      const { store, ws, newestFirst } = await seed();
      await eventually(() => store.queryJobs({ workspace_id: ws, limit: 50 }), (l) => l.length === 6);
      const seen: string[] = [];
      let after: JobQuery['after'];
      for (let page = 0; page < 10; page++) {
        const jobs = await store.queryJobs({ workspace_id: ws, limit: 4, after });
        seen.push(...ids(jobs));
        if (jobs.length < 4) break;
        after = { created_at: jobs.at(-1)!.created_at, id: jobs.at(-1)!.id };
      }
      expect(seen).toEqual(ids(newestFirst));
      const filtered = await store.queryJobs({ workspace_id: ws, limit: 1, path_prefix: 'f/ops/', after: { created_at: newestFirst[1].created_at, id: newestFirst[1].id } });
      expect(ids(filtered)).toEqual([newestFirst.find((j, i) => i > 1 && j.script_path.startsWith('f/ops/'))!.id]);
    });
  });
}
