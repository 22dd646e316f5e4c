import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, JobListFilter, Store } from '../../functions/ports.js';
import { describeEntityContract } from './store-entities.contract.js';
import { describeOutboxContract } from './store-outbox.contract.js';
import { describeJobQueryContract } from './store-job-query.contract.js';
import { describeMembershipContract } from './store-memberships.contract.js';
import { aJob, anEntity, aScriptVersion, aToken, aUser, aWorkspace, eventually, FAR_FUTURE, nextTimestamp, uid } from './store-fixtures.js';

/**
 * What the core relies on from a Store, run against every adapter so the two shells cannot drift.
 * One store per suite; tests keep apart through unique ids (see store-fixtures.ts).
 */
export function describeStoreContract(name: string, makeStore: () => Promise<{ store: Store; cleanup(): Promise<void> }>) {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    let cleanup: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      ({ store, cleanup } = await makeStore());
    });
    afterAll(async () => {
      await cleanup?.();
    });

    async function newWorkspace(): Promise<string> {
      const ws = aWorkspace();
      await store.createWorkspace(ws);
      return ws.id;
    }

    describe('workspaces', () => {
      it('creates a workspace once; a second create reports it exists and changes nothing', async () => {
        const ws = aWorkspace();
        expect(await store.createWorkspace(ws)).toBe('created');
        expect(await store.createWorkspace({ ...ws, name: 'other name', object_storage_enabled: true })).toBe('exists');
        expect(await store.getWorkspace(ws.id)).toEqual(ws);
        expect(await store.getWorkspace(uid('missing'))).toBeNull();
      });

      it('lists workspaces ordered by id', async () => {
        const b = aWorkspace({ id: uid('list-b') });
        const a = aWorkspace({ id: uid('list-a') });
        await store.createWorkspace(b);
        await store.createWorkspace(a);
        const mine = (all: { id: string }[]) => all.filter((w) => w.id === a.id || w.id === b.id);
        const listed = await eventually(() => store.listWorkspaces(), (all) => mine(all).length === 2);
        expect(mine(listed)).toEqual([a, b]);
        const ids = listed.map((w) => w.id);
        expect(ids).toEqual([...ids].sort());
      });

      it('turns object storage on and off', async () => {
        const ws = aWorkspace();
        await store.createWorkspace(ws);
        await store.setObjectStorage(ws.id, true);
        expect((await store.getWorkspace(ws.id))?.object_storage_enabled).toBe(true);
        await store.setObjectStorage(ws.id, false);
        expect((await store.getWorkspace(ws.id))?.object_storage_enabled).toBe(false);
      });
    });

    describe('script versions', () => {
      it('inserts the first version of a free path and finds it by path and by hash', async () => {
        const ws = await newWorkspace();
        const v = aScriptVersion(ws, 'f/s/first', { timeout: 30, delete_after_use: true, description: 'd' });
        expect(await store.insertScriptVersion(v, null)).toBe(true);
        expect(await store.getLatestScript(ws, v.path)).toEqual(v);
        const byHash = await store.getScriptByHash(ws, v.hash);
        expect(byHash).toEqual(v);
        expect(Object.keys(byHash!.schema.properties)).toEqual(['b', 'a']);
      });

      it('keeps a version\'s deployment message and lock, and has neither key when they are absent', async () => {
        const ws = await newWorkspace();
        const v = aScriptVersion(ws, 'f/s/locked', { deployment_message: 'release 42', lock: 'requests==2.32.0\n' });
        expect(await store.insertScriptVersion(v, null)).toBe(true);
        expect(await store.getLatestScript(ws, v.path)).toEqual(v);
        expect(await store.getScriptByHash(ws, v.hash)).toEqual(v);
        const plain = aScriptVersion(ws, 'f/s/plain');
        await store.insertScriptVersion(plain, null);
        const got = (await store.getLatestScript(ws, plain.path))!;
        expect(['deployment_message' in got, 'lock' in got]).toEqual([false, false]);
      });

      it('refuses a null expectedLatest when the path is taken, and a non-null one when it is free', async () => {
        const ws = await newWorkspace();
        const v1 = aScriptVersion(ws, 'f/s/taken');
        await store.insertScriptVersion(v1, null);
        const intruder = aScriptVersion(ws, v1.path);
        expect(await store.insertScriptVersion(intruder, null)).toBe(false);
        expect(await store.getLatestScript(ws, v1.path)).toEqual(v1);
        expect(await store.getScriptByHash(ws, intruder.hash)).toBeNull();

        const orphan = aScriptVersion(ws, 'f/s/free', { parent_hash: v1.hash });
        expect(await store.insertScriptVersion(orphan, v1.hash)).toBe(false);
        expect(await store.getLatestScript(ws, orphan.path)).toBeNull();
        expect(await store.getScriptByHash(ws, orphan.hash)).toBeNull();
      });

      it('moves the path to a new version that names the latest, keeping old versions by hash', async () => {
        const ws = await newWorkspace();
        const v1 = aScriptVersion(ws, 'f/s/versions');
        const v2 = aScriptVersion(ws, v1.path, { parent_hash: v1.hash, content: 'def main():\n    return 2\n', language: 'python3' });
        await store.insertScriptVersion(v1, null);
        expect(await store.insertScriptVersion(v2, v1.hash)).toBe(true);
        expect(await store.getLatestScript(ws, v1.path)).toEqual(v2);
        expect(await store.getScriptByHash(ws, v1.hash)).toEqual(v1);

        const stale = aScriptVersion(ws, v1.path, { parent_hash: v1.hash });
        expect(await store.insertScriptVersion(stale, v1.hash)).toBe(false);
        expect(await store.getLatestScript(ws, v1.path)).toEqual(v2);
        expect(await store.getScriptByHash(ws, stale.hash)).toBeNull();
      });

      it('lets at most one of two racing versions with the same parent in', async () => {
        const ws = await newWorkspace();
        const v1 = aScriptVersion(ws, 'f/s/race');
        await store.insertScriptVersion(v1, null);
        const [a, b] = [aScriptVersion(ws, v1.path, { parent_hash: v1.hash }), aScriptVersion(ws, v1.path, { parent_hash: v1.hash })];
        const results = await Promise.all([store.insertScriptVersion(a, v1.hash), store.insertScriptVersion(b, v1.hash)]);
        expect(results.filter(Boolean).length).toBeLessThanOrEqual(1);
        const latest = await store.getLatestScript(ws, v1.path);
        expect(latest?.hash).toBe(results[0] ? a.hash : results[1] ? b.hash : v1.hash);
      });

      it('is scoped by workspace', async () => {
        const [ws, other] = [await newWorkspace(), await newWorkspace()];
        const v = aScriptVersion(ws, 'f/s/scoped');
        await store.insertScriptVersion(v, null);
        expect(await store.getLatestScript(other, v.path)).toBeNull();
        expect(await store.getScriptByHash(other, v.hash)).toBeNull();
        expect(await store.listLatestScripts(other)).toEqual([]);
        expect(await store.insertScriptVersion(aScriptVersion(other, v.path), null)).toBe(true);
      });

      it('lists only the latest version of each path, ordered by path', async () => {
        const ws = await newWorkspace();
        const b1 = aScriptVersion(ws, 'f/b/script');
        const b2 = aScriptVersion(ws, b1.path, { parent_hash: b1.hash });
        const a = aScriptVersion(ws, 'f/a/script');
        const u = aScriptVersion(ws, 'u/alice/script');
        await store.insertScriptVersion(b1, null);
        await store.insertScriptVersion(u, null);
        await store.insertScriptVersion(a, null);
        await store.insertScriptVersion(b2, b1.hash);
        expect(await store.listLatestScripts(ws)).toEqual([a, b2, u]);
      });

      it('deletes every version at a path and says how many', async () => {
        const ws = await newWorkspace();
        const v1 = aScriptVersion(ws, 'f/s/doomed');
        const v2 = aScriptVersion(ws, v1.path, { parent_hash: v1.hash });
        const kept = aScriptVersion(ws, 'f/s/kept');
        await store.insertScriptVersion(v1, null);
        await store.insertScriptVersion(v2, v1.hash);
        await store.insertScriptVersion(kept, null);

        expect(await store.deleteScriptPath(ws, v1.path)).toBe(2);
        expect(await store.getLatestScript(ws, v1.path)).toBeNull();
        expect(await store.getScriptByHash(ws, v1.hash)).toBeNull();
        expect(await store.getScriptByHash(ws, v2.hash)).toBeNull();
        expect(await store.listLatestScripts(ws)).toEqual([kept]);
        expect(await store.deleteScriptPath(ws, v1.path)).toBe(0);
        // The path is free again.
        expect(await store.insertScriptVersion(aScriptVersion(ws, v1.path), null)).toBe(true);
      });
    });

    describe('jobs', () => {
      async function runningJob(ws: string): Promise<Job> {
        const job = aJob(ws);
        await store.insertJob(job);
        return (await store.claimJob(job.id, nextTimestamp(), FAR_FUTURE))!;
      }

      it('stores a job and finds it only in its own workspace', async () => {
        const ws = await newWorkspace();
        const job = aJob(ws, { delete_after_use: true });
        await store.insertJob(job);
        expect(await store.getJob(ws, job.id)).toEqual(job);
        expect(await store.getJob(await newWorkspace(), job.id)).toBeNull();
        expect(await store.getJob(ws, uid('no-such-job'))).toBeNull();

        const noArgs = aJob(ws, { args: null });
        await store.insertJob(noArgs);
        expect((await store.getJob(ws, noArgs.id))?.args).toBeNull();
      });

      it('keeps the scopes of the token that started a job, and has no key when it had none', async () => {
        const ws = await newWorkspace();
        const scoped = aJob(ws, { created_scopes: ['jobs:run:u/a/*', 'variables:read'] });
        await store.insertJob(scoped);
        expect((await store.getJob(ws, scoped.id))?.created_scopes).toEqual(['jobs:run:u/a/*', 'variables:read']);
        const full = aJob(ws);
        await store.insertJob(full);
        expect(await store.getJob(ws, full.id)).not.toHaveProperty('created_scopes');
      });

      it('keeps the kind of a job and the flow job it belongs to', async () => {
        const ws = await newWorkspace();
        const flow = aJob(ws, { kind: 'flow', script_hash: null, flow_version: 17 });
        const step = aJob(ws, { kind: 'flowstep', parent_job: flow.id, script_hash: null, flow_version: 17, flow_module: 'a' });
        await store.insertJob(flow);
        await store.insertJob(step);
        expect(await store.getJob(ws, flow.id)).toEqual(flow);
        expect(await store.getJob(ws, step.id)).toEqual(step);
      });

      it('claims a queued job once: running, started, one more attempt', async () => {
        const ws = await newWorkspace();
        const job = aJob(ws);
        await store.insertJob(job);
        const startedAt = nextTimestamp();
        const claimed = await store.claimJob(job.id, startedAt, FAR_FUTURE);
        expect(claimed).toEqual({ ...job, status: 'running', started_at: startedAt, attempts: 1 });
        expect(await store.claimJob(job.id, nextTimestamp(), FAR_FUTURE)).toBeNull();
        expect(await store.getJob(ws, job.id)).toEqual(claimed);
        expect(await store.claimJob(uid('no-such-job'), nextTimestamp(), FAR_FUTURE)).toBeNull();
      });

      it('never claims a held job; releasing it once makes it claimable, and it keeps its run settings', async () => {
        const ws = await newWorkspace();
        const job = aJob(ws, { held: true, priority: 7, concurrency_key: 'script/f/s/limited' });
        await store.insertJob(job);
        expect(await store.getJob(ws, job.id)).toEqual(job);
        expect(await store.claimJob(job.id, nextTimestamp(), FAR_FUTURE)).toBeNull();
        expect(await store.releaseHeldJob(job.id)).toBe(true);
        expect(await store.releaseHeldJob(job.id)).toBe(false);
        expect(await store.getJob(ws, job.id)).toMatchObject({ status: 'queued', priority: 7, concurrency_key: 'script/f/s/limited' });
        expect((await store.getJob(ws, job.id))?.held ?? false).toBe(false);
        expect(await store.claimJob(job.id, nextTimestamp(), FAR_FUTURE)).toMatchObject({ status: 'running' });
        const hit = aJob(ws, { cache_hit: true });
        await store.insertJob(hit);
        expect((await store.getJob(ws, hit.id))?.cache_hit).toBe(true);
      });

      it('lets a running job be claimed again only once its lease ran out (its worker died)', async () => {
        const ws = await newWorkspace();
        const job = aJob(ws);
        await store.insertJob(job);
        const first = nextTimestamp();
        const leaseEnd = nextTimestamp();
        expect(await store.claimJob(job.id, first, leaseEnd)).not.toBeNull();
        // Still within the lease: the worker may be alive, so nobody takes the job over.
        expect(await store.claimJob(job.id, first, FAR_FUTURE)).toBeNull();
        const afterLease = nextTimestamp();
        const reclaimed = await store.claimJob(job.id, afterLease, FAR_FUTURE);
        expect(reclaimed).toMatchObject({ status: 'running', started_at: afterLease, attempts: 2 });
        // A finished job is never claimed again, lease or not.
        await store.completeJob(job.id, { status: 'success', result: 1, logs: '' }, nextTimestamp());
        expect(await store.claimJob(job.id, '2200-01-01T00:00:00.000Z', FAR_FUTURE)).toBeNull();
      });

      it('lets exactly one of two concurrent claims win', async () => {
        const ws = await newWorkspace();
        const job = aJob(ws);
        await store.insertJob(job);
        const claims = await Promise.all([store.claimJob(job.id, nextTimestamp(), FAR_FUTURE), store.claimJob(job.id, nextTimestamp(), FAR_FUTURE)]);
        expect(claims.filter((c) => c !== null)).toHaveLength(1);
        expect((await store.getJob(ws, job.id))?.attempts).toBe(1);
      });

      it('appends stream chunks in order, only while the job runs', async () => {
        const ws = await newWorkspace();
        const queued = aJob(ws);
        await store.insertJob(queued);
        await store.appendJobStream(queued.id, 'too early');
        expect(await store.getJob(ws, queued.id)).toMatchObject({ result_stream: '', streaming: false });

        const job = await runningJob(ws);
        for (const chunk of ['one ', 'two ', 'three ✓']) await store.appendJobStream(job.id, chunk);
        expect(await store.getJob(ws, job.id)).toMatchObject({ result_stream: 'one two three ✓', streaming: true, status: 'running' });

        await store.completeJob(job.id, { status: 'success', result: 'done', logs: '' }, nextTimestamp());
        await store.appendJobStream(job.id, ' too late');
        expect((await store.getJob(ws, job.id))?.result_stream).toBe('one two three ✓');
      });

      it('appends live logs to a running job only; completion writes the full text', async () => {
        const ws = await newWorkspace();
        const queued = aJob(ws);
        await store.insertJob(queued);
        await store.appendJobLogs(queued.id, 'too early');
        expect((await store.getJob(ws, queued.id))?.logs).toBe('');

        const job = await runningJob(ws);
        for (const chunk of ['one\n', 'two ✓\n']) await store.appendJobLogs(job.id, chunk);
        expect(await store.getJob(ws, job.id)).toMatchObject({ logs: 'one\ntwo ✓\n', status: 'running' });

        await store.completeJob(job.id, { status: 'success', result: null, logs: 'one\ntwo ✓\nthree\n' }, nextTimestamp());
        await store.appendJobLogs(job.id, 'too late');
        expect((await store.getJob(ws, job.id))?.logs).toBe('one\ntwo ✓\nthree\n');
      });

      it('completes a job once; a second completion changes nothing', async () => {
        const ws = await newWorkspace();
        const job = await runningJob(ws);
        const completedAt = nextTimestamp();
        const result = { rows: [{ id: 1, score: 0.25 }], note: null, big: 12345678901 };
        expect(await store.completeJob(job.id, { status: 'success', result, logs: 'ok\n' }, completedAt)).toBe(true);
        const done = await store.getJob(ws, job.id);
        expect(done).toEqual({ ...job, status: 'success', success: true, result, logs: 'ok\n', completed_at: completedAt });

        expect(await store.completeJob(job.id, { status: 'failed', result: { error: { name: 'E', message: 'm' } }, logs: '' }, nextTimestamp())).toBe(false);
        expect(await store.getJob(ws, job.id)).toEqual(done);
        expect(await store.completeJob(uid('no-such-job'), { status: 'success', result: 1, logs: '' }, nextTimestamp())).toBe(false);
      });

      it("reads a job's status alone, as it moves, and only in the job's own workspace", async () => {
        const ws = await newWorkspace();
        const job = aJob(ws);
        await store.insertJob(job);
        expect(await store.getJobStatus(ws, job.id)).toBe('queued');
        await store.claimJob(job.id, nextTimestamp(), FAR_FUTURE);
        expect(await store.getJobStatus(ws, job.id)).toBe('running');
        await store.completeJob(job.id, { status: 'canceled', result: { error: { name: 'Canceled', message: 'm' } }, logs: '' }, nextTimestamp());
        expect(await store.getJobStatus(ws, job.id)).toBe('canceled');
        expect(await store.getJobStatus(await newWorkspace(), job.id)).toBeNull();
        expect(await store.getJobStatus(ws, uid('no-such-job'))).toBeNull();
      });

      it('records a failure as success=false', async () => {
        const ws = await newWorkspace();
        const job = await runningJob(ws);
        const result = { error: { name: 'ValueError', message: 'bad', stack: 'Traceback...' } };
        await store.completeJob(job.id, { status: 'failed', result, logs: 'boom\n' }, nextTimestamp());
        expect(await store.getJob(ws, job.id)).toMatchObject({ status: 'failed', success: false, result, logs: 'boom\n' });
      });

      it('keeps a cancellation when the worker finishes later', async () => {
        const ws = await newWorkspace();
        const queued = aJob(ws);
        await store.insertJob(queued);
        const canceled = { status: 'canceled' as const, result: { error: { name: 'Canceled', message: 'canceled by alice' } }, logs: '' };
        expect(await store.completeJob(queued.id, canceled, nextTimestamp())).toBe(true);
        expect(await store.claimJob(queued.id, nextTimestamp(), FAR_FUTURE)).toBeNull();

        const running = await runningJob(ws);
        expect(await store.completeJob(running.id, canceled, nextTimestamp())).toBe(true);
        expect(await store.completeJob(running.id, { status: 'success', result: 42, logs: 'late' }, nextTimestamp())).toBe(false);
        expect(await store.getJob(ws, running.id)).toMatchObject({ status: 'canceled', success: false, result: canceled.result, logs: '' });
      });

      it('scrubs args, result, logs and stream for good', async () => {
        const ws = await newWorkspace();
        const job = await runningJob(ws);
        await store.appendJobStream(job.id, 'secret stream');
        await store.completeJob(job.id, { status: 'success', result: { secret: 1 }, logs: 'secret logs' }, nextTimestamp());
        await store.scrubJob(job.id);
        expect(await store.getJob(ws, job.id)).toMatchObject({ args: null, result: null, logs: '', result_stream: '', deleted: true, status: 'success' });
        await store.scrubJob(uid('no-such-job'));
      });

      it('requeues jobs left running, and only those', async () => {
        const ws = await newWorkspace();
        const running = await runningJob(ws);
        const queued = aJob(ws);
        await store.insertJob(queued);
        const finished = await runningJob(ws);
        await store.completeJob(finished.id, { status: 'success', result: null, logs: '' }, nextTimestamp());

        const requeued: string[] = [];
        await eventually(async () => requeued.push(...(await store.requeueInterrupted())), () => requeued.includes(running.id));
        expect(requeued).toContain(running.id);
        expect(requeued).not.toContain(queued.id);
        expect(requeued).not.toContain(finished.id);
        expect((await store.getJob(ws, running.id))?.status).toBe('queued');
        expect((await store.getJob(ws, finished.id))?.status).toBe('success');
        // At-least-once: the requeued job is claimed again, counting a second attempt.
        expect((await store.claimJob(running.id, nextTimestamp(), FAR_FUTURE))?.attempts).toBe(2);
      });

      it('lists jobs stale in a status across workspaces: queued since creation, running since their start, oldest first', async () => {
        // Timestamps from long before any other test's (store-fixtures' EPOCH), so only these are that old.
        const at = (minute: number) => new Date(Date.UTC(1999, 0, 1, 0, minute)).toISOString();
        const [wsA, wsB] = [await newWorkspace(), await newWorkspace()];
        const oldQueued = aJob(wsA, { created_at: at(5) });
        const olderQueued = aJob(wsB, { created_at: at(1) });
        const freshQueued = aJob(wsA, { created_at: at(40) });
        const longRunning = aJob(wsA, { created_at: at(2) });
        const recentlyStarted = aJob(wsB, { created_at: at(3) });
        const finished = aJob(wsB, { created_at: at(4) });
        for (const j of [oldQueued, olderQueued, freshQueued, longRunning, recentlyStarted, finished]) await store.insertJob(j);
        await store.claimJob(longRunning.id, at(10), FAR_FUTURE);
        await store.claimJob(recentlyStarted.id, at(45), FAR_FUTURE);
        await store.claimJob(finished.id, at(6), FAR_FUTURE);
        await store.completeJob(finished.id, { status: 'success', result: null, logs: '' }, at(7));

        const ids = (jobs: Job[]) => jobs.map((j) => j.id);
        const queued = await eventually(() => store.listStaleJobs('queued', at(30), 10), (jobs) => jobs.length >= 2);
        expect(ids(queued)).toEqual([olderQueued.id, oldQueued.id]);
        expect(queued[0]).toMatchObject({ workspace_id: wsB, status: 'queued', args: olderQueued.args });
        const running = await eventually(() => store.listStaleJobs('running', at(30), 10), (jobs) => jobs.length >= 1);
        expect(ids(running)).toEqual([longRunning.id]);
        expect(ids(await store.listStaleJobs('queued', at(30), 1))).toEqual([olderQueued.id]);
        expect(await store.listStaleJobs('queued', at(0), 10)).toEqual([]);
      });

      it("counts a workspace's queued jobs, held ones too, up to the count asked for", async () => {
        const ws = await newWorkspace();
        const queued = [aJob(ws), aJob(ws), aJob(ws, { held: true, concurrency_key: 'k' })];
        const claimed = aJob(ws);
        const canceled = aJob(ws);
        const requeued = aJob(ws);
        for (const j of [...queued, claimed, canceled, requeued]) await store.insertJob(j);
        // Another workspace's queued job and a job stored already running are not counted.
        await store.insertJob(aJob(await newWorkspace()));
        const running = aJob(ws, { status: 'running', started_at: nextTimestamp(), attempts: 1 });
        await store.insertJob(running);
        expect(await store.claimJob(claimed.id, nextTimestamp(), FAR_FUTURE)).not.toBeNull();
        expect(await store.completeJob(canceled.id, { status: 'canceled', result: null, logs: '' }, nextTimestamp())).toBe(true);
        expect(await eventually(() => store.countQueuedJobs(ws, 100), (n) => n === queued.length + 1)).toBe(queued.length + 1);
        // Claimed, then back in the queue after a crash (requeueInterrupted puts back every running
        // job of the store, these three too): queued again.
        expect(await store.claimJob(requeued.id, nextTimestamp(), FAR_FUTURE)).not.toBeNull();
        const back: string[] = [];
        await eventually(async () => back.push(...(await store.requeueInterrupted())), () => [claimed.id, requeued.id, running.id].every((id) => back.includes(id)));
        const expected = queued.length + 3;
        expect(await eventually(() => store.countQueuedJobs(ws, 100), (n) => n === expected)).toBe(expected);
        expect(await store.countQueuedJobs(ws, 2)).toBe(2);
        expect(await store.countQueuedJobs(uid('empty-ws'), 100)).toBe(0);
        // Leaving the queue takes a job out of the count.
        for (const j of [...queued.slice(0, 2), claimed]) await store.completeJob(j.id, { status: 'failed', result: null, logs: '' }, nextTimestamp());
        expect(await eventually(() => store.countQueuedJobs(ws, 100), (n) => n === expected - 3)).toBe(expected - 3);
      });

      it("counts a run's jobs on its job up to a limit, atomically, and gives them back", async () => {
        const ws = await newWorkspace();
        const top = aJob(ws);
        await store.insertJob(top);
        expect(await store.countRunJobs(top.id, 3, 5)).toBe(true);
        // 3 + 3 would pass 5: nothing is added.
        expect(await store.countRunJobs(top.id, 3, 5)).toBe(false);
        expect(await store.countRunJobs(top.id, 2, 5)).toBe(true);
        expect(await store.countRunJobs(top.id, 1, 5)).toBe(false);
        // Given back, there is room again.
        expect(await store.countRunJobs(top.id, -2, 0)).toBe(true);
        expect(await store.countRunJobs(top.id, 2, 5)).toBe(true);
        expect(await store.countRunJobs(top.id, 1, 5)).toBe(false);
        // Counting at once never passes the limit, whatever the interleaving.
        const other = aJob(ws);
        await store.insertJob(other);
        const all = await Promise.all(Array.from({ length: 12 }, () => store.countRunJobs(other.id, 1, 10)));
        expect(all.filter(Boolean)).toHaveLength(10);
        // More than the limit at once, even at first: nothing.
        const fresh = aJob(ws);
        await store.insertJob(fresh);
        expect(await store.countRunJobs(fresh.id, 11, 10)).toBe(false);
        expect(await store.countRunJobs(fresh.id, 10, 10)).toBe(true);
        // The count is no part of the job as read.
        expect(Object.keys((await store.getJob(ws, top.id))!)).not.toContain('jobs_made');
      });

      it('lists jobs newest first, filtered by status and script path, up to the limit', async () => {
        const ws = await newWorkspace();
        const j1 = aJob(ws, { script_path: 'f/list/a' });
        const j2 = aJob(ws, { script_path: 'f/list/b' });
        const j3 = aJob(ws, { script_path: 'f/list/a' });
        const j4 = aJob(ws, { script_path: 'f/list/a' });
        for (const j of [j1, j2, j3, j4]) await store.insertJob(j);
        await store.insertJob(aJob(await newWorkspace(), { script_path: 'f/list/a' }));
        await store.claimJob(j3.id, nextTimestamp(), FAR_FUTURE);

        const ids = async (filter: Omit<JobListFilter, 'workspace_id'>) => (await store.listJobs({ workspace_id: ws, ...filter })).map((j) => j.id);
        const all = await eventually(() => ids({ limit: 10 }), (l) => l.length === 4);
        expect(all).toEqual([j4.id, j3.id, j2.id, j1.id]);
        expect(await ids({ limit: 2 })).toEqual([j4.id, j3.id]);
        expect(await ids({ status: 'queued', limit: 10 })).toEqual([j4.id, j2.id, j1.id]);
        expect(await ids({ script_path: 'f/list/a', limit: 10 })).toEqual([j4.id, j3.id, j1.id]);
        expect(await ids({ status: 'queued', script_path: 'f/list/a', limit: 1 })).toEqual([j4.id]);
        expect(await ids({ status: 'running', script_path: 'f/list/b', limit: 10 })).toEqual([]);
        // The HTTP route passes absent filters as explicit undefined.
        expect(await ids({ status: undefined, script_path: undefined, limit: 10 })).toEqual(all);
        const full = await store.listJobs({ workspace_id: ws, status: 'running', limit: 10 });
        expect(full).toEqual([await store.getJob(ws, j3.id)]);
      });

      it('lists only the jobs of the kind asked for, the limit counting only them', async () => {
        const ws = await newWorkspace();
        const flow = aJob(ws, { kind: 'flow', script_hash: null, flow_version: 3 });
        await store.insertJob(flow);
        for (let i = 0; i < 3; i++) await store.insertJob(aJob(ws));
        const ids = async (filter: Omit<JobListFilter, 'workspace_id'>) => (await store.listJobs({ workspace_id: ws, ...filter })).map((j) => j.id);
        await eventually(() => ids({ limit: 10 }), (l) => l.length === 4);
        expect(await ids({ kind: 'flow', limit: 1 })).toEqual([flow.id]);
        expect(await ids({ kind: 'flow', status: 'queued', limit: 10 })).toEqual([flow.id]);
        expect(await ids({ kind: 'script', limit: 10 })).toHaveLength(3);
        expect(await ids({ kind: 'flowstep', limit: 10 })).toEqual([]);
      });

      it('keeps the schedule that started a job and lists the jobs of one schedule, newest first', async () => {
        const ws = await newWorkspace();
        const j1 = aJob(ws, { schedule_path: 'f/list/nightly' });
        const j2 = aJob(ws);
        const j3 = aJob(ws, { schedule_path: 'f/list/hourly' });
        const j4 = aJob(ws, { schedule_path: 'f/list/nightly' });
        for (const j of [j1, j2, j3, j4]) await store.insertJob(j);
        const ids = async (filter: Omit<JobListFilter, 'workspace_id'>) => (await store.listJobs({ workspace_id: ws, ...filter })).map((j) => j.id);
        await eventually(() => ids({ limit: 10 }), (l) => l.length === 4);
        expect(await ids({ schedule_path: 'f/list/nightly', limit: 10 })).toEqual([j4.id, j1.id]);
        expect(await ids({ schedule_path: 'f/list/nightly', limit: 1 })).toEqual([j4.id]);
        expect(await ids({ schedule_path: 'f/list/nightly', status: 'running', limit: 10 })).toEqual([]);
        expect(await ids({ schedule_path: undefined, limit: 10 })).toEqual([j4.id, j3.id, j2.id, j1.id]);
        expect((await store.getJob(ws, j3.id))?.schedule_path).toBe('f/list/hourly');
        expect((await store.getJob(ws, j2.id))?.schedule_path ?? null).toBeNull();
      });
    });

    describe('users', () => {
      it('creates a user once and never overwrites it', async () => {
        const u = aUser({ is_admin: true });
        expect(await store.createUser(u)).toBe(true);
        expect(await store.createUser({ ...u, email: 'other@example.com', is_admin: false, password_hash: null })).toBe(false);
        expect(await store.getUser(u.username)).toEqual(u);
        expect(await store.getUser(uid('nobody'))).toBeNull();
        const passwordless = aUser({ password_hash: null });
        await store.createUser(passwordless);
        expect(await store.getUser(passwordless.username)).toEqual(passwordless);
      });

      it('lists users ordered by username', async () => {
        const b = aUser({ username: uid('list-b') });
        const a = aUser({ username: uid('list-a') });
        await store.createUser(b);
        await store.createUser(a);
        const mine = (all: { username: string }[]) => all.filter((u) => u.username === a.username || u.username === b.username);
        const listed = await eventually(() => store.listUsers(), (all) => mine(all).length === 2);
        expect(mine(listed)).toEqual([a, b]);
        const names = listed.map((u) => u.username);
        expect(names).toEqual([...names].sort());
      });

      it('replaces an existing user, password hash included, and creates none', async () => {
        const u = aUser();
        await store.createUser(u);
        const changed = { ...u, email: 'new@example.com', is_admin: true, password_hash: 'scrypt$16384$8$1$bmV3$bmV3' };
        expect(await store.updateUser(changed)).toBe(true);
        expect(await store.getUser(u.username)).toEqual(changed);
        const cleared = { ...changed, password_hash: null };
        expect(await store.updateUser(cleared)).toBe(true);
        expect(await store.getUser(u.username)).toEqual(cleared);
        const listed = await eventually(() => store.listUsers(), (all) => all.some((x) => x.username === u.username));
        expect(listed.find((x) => x.username === u.username)).toEqual(cleared);

        const ghost = aUser();
        expect(await store.updateUser(ghost)).toBe(false);
        expect(await store.getUser(ghost.username)).toBeNull();
      });
    });

    describe('tokens', () => {
      it('puts (replacing by hash), gets and deletes tokens', async () => {
        const t = aToken();
        await store.putToken(t);
        expect(await store.getToken(t.token_hash)).toEqual(t);

        const scoped = { ...t, label: 'job', kind: 'session' as const, workspace_id: uid('ws'), scopes: ['jobs:run'], expires_at: '2030-06-01T00:00:00.000Z' };
        await store.putToken(scoped);
        expect(await store.getToken(t.token_hash)).toEqual(scoped);

        await store.deleteToken(t.token_hash);
        expect(await store.getToken(t.token_hash)).toBeNull();
        await store.deleteToken(t.token_hash);
        expect(await store.getToken(uid('unknown'))).toBeNull();
      });

      it('marks the expiry notice of a token that exists, and never brings a deleted one back', async () => {
        const t = aToken({ expires_at: '2030-06-01T00:00:00.000Z' });
        await store.putToken(t);
        expect(await store.markTokenExpiryNotice(t.token_hash, '2030-05-25T00:00:00.000Z')).toBe(true);
        expect(await store.getToken(t.token_hash)).toEqual({ ...t, expiry_notice_at: '2030-05-25T00:00:00.000Z' });
        await store.deleteToken(t.token_hash);
        expect(await store.markTokenExpiryNotice(t.token_hash, '2030-05-26T00:00:00.000Z')).toBe(false);
        expect(await store.getToken(t.token_hash)).toBeNull();
      });

      it('keeps scopes as given: null (all permissions), none, or a list in order', async () => {
        for (const scopes of [null, [], ['scripts:run:f/ops/*', 'jobs:read', 'variables:read:u/alice/db']]) {
          const t = aToken({ scopes, kind: 'api' });
          await store.putToken(t);
          expect(await store.getToken(t.token_hash)).toEqual(t);
        }
      });

      it("lists only the owner's tokens, oldest first, and forgets deleted ones", async () => {
        const owner = uid('owner');
        const [first, second, third] = [aToken({ owner, kind: 'session' }), aToken({ owner, scopes: ['jobs:read'] }), aToken({ owner })];
        // Written out of creation order: the listing orders by created_at, not by write.
        for (const t of [second, third, first]) await store.putToken(t);
        const strangers = aToken({ owner: uid('owner') });
        await store.putToken(strangers);

        expect(await eventually(() => store.listTokens(owner), (l) => l.length === 3)).toEqual([first, second, third]);
        await store.deleteToken(second.token_hash);
        expect(await eventually(() => store.listTokens(owner), (l) => l.length === 2)).toEqual([first, third]);
        // Handed to another owner: it leaves this owner's list.
        const moved = { ...third, owner: strangers.owner };
        await store.putToken(moved);
        expect(await eventually(() => store.listTokens(owner), (l) => l.length === 1)).toEqual([first]);
        expect(await eventually(() => store.listTokens(strangers.owner), (l) => l.length === 2)).toEqual([moved, strangers]);
        expect(await store.listTokens(uid('nobody'))).toEqual([]);
      });
    });

    it('keeps what was stored when the caller later changes the records it wrote or read', async () => {
      const ws = await newWorkspace();
      const job = aJob(ws);
      await store.insertJob(job);
      Object.assign(job, { status: 'failed' });
      (job.args as { n: number }).n = 999;
      const read = (await store.getJob(ws, job.id))!;
      expect(read).toMatchObject({ status: 'queued', args: { n: 1 } });
      (read.args as { n: number }).n = 5;
      expect((await store.getJob(ws, job.id))?.args).toMatchObject({ n: 1 });

      const v = aScriptVersion(ws, 'f/s/copied');
      await store.insertScriptVersion(v, null);
      v.schema.required.push('a');
      (await store.getLatestScript(ws, v.path))!.schema.required.push('c');
      expect((await store.getScriptByHash(ws, v.hash))?.schema.required).toEqual(['b']);

      const e = anEntity('resource', ws, 'u/alice/copied');
      await store.createEntity(e);
      (e.value.tags as string[]).push('changed');
      ((await store.getEntity('resource', ws, e.key))!.value.tags as string[]).push('changed');
      expect((await store.getEntity('resource', ws, e.key))?.value.tags).toEqual(['a', 'b']);
    });

    describeEntityContract(() => store, newWorkspace);
    describeOutboxContract(() => store, newWorkspace);
    describeJobQueryContract(() => store, newWorkspace);
    describeMembershipContract(() => store);
  });
}
