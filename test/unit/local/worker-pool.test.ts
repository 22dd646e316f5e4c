import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LocalWorkerPool } from '../../../functions/adapters/local/worker-pool.js';
import { SqliteStore } from '../../../functions/adapters/local/sqlite-store.js';
import { queuedJob } from '../../../functions/core/jobs/jobs.js';
import { scriptJobTarget } from '../../../functions/core/jobs/run-target.js';
import type { WorkerDeps } from '../../../functions/core/deps.js';
import type { Job, JobSlot, RunIntent } from '../../../functions/ports.js';

/**
 * The local pool's choice between a worker now, a wait in memory and the queue table, with the
 * real SQLite queue and jobs that end when the test says (the executor is the pool's only seam).
 */

const SYNC: RunIntent = { callerWaits: true, timeoutMs: 60_000 };
const ASYNC: RunIntent = { callerWaits: false, timeoutMs: 60_000 };

let store: SqliteStore;
let ran: string[];
let finish: Map<string, () => void>;

/** A wait far longer than any test takes, unless the test is about the wait running out. */
function pool(concurrency: number, callerWaitMs = 60_000): LocalWorkerPool {
  const p = new LocalWorkerPool(store, concurrency, {
    callerWaitMs,
    execute: async (_deps, id) => {
      // The core's worker claims a job handed over by id before running it (executeJob).
      store.db.prepare("UPDATE jobs SET status = 'running' WHERE id = ? AND status = 'queued'").run(id);
      ran.push(id);
      await new Promise<void>((resolve) => finish.set(id, resolve));
    },
  });
  p.start({ clock: { now: () => new Date() }, config: { jobTimeoutMs: 60_000 } } as unknown as WorkerDeps);
  return p;
}

/** Each job is made when its caller arrives (reserve), as the core makes it; later ones are younger. */
const arrivals = new Map<string, string>();
/** A job's workspace: 'main' unless a test puts it elsewhere. */
const workspaces = new Map<string, string>();
let clockMs = Date.UTC(2026, 0, 1);
function arrive(p: LocalWorkerPool, id: string, intent: RunIntent, workspace = 'main') {
  arrivals.set(id, new Date((clockMs += 1)).toISOString());
  workspaces.set(id, workspace);
  return p.reserve({ id, workspace_id: workspace }, intent);
}

function job(id: string): Job {
  return queuedJob(arrivals.get(id) ?? new Date((clockMs += 1)).toISOString(), {
    id,
    workspace_id: workspaces.get(id) ?? 'main',
    ...scriptJobTarget({ path: 'u/admin/s', hash: 'abc123', language: 'bun' }),
    parent_job: null,
    args: {},
    created_by: 'admin',
  });
}

/** What the core does with a slot: store the job running, then hand it over. */
async function runIn(slot: JobSlot, id: string) {
  const running: Job = { ...job(id), status: 'running', started_at: new Date().toISOString(), attempts: 1 };
  await store.insertJob(running);
  slot.run(running);
}

/** What the core does without one: store the job queued and tell the queue. */
async function queue(p: LocalWorkerPool, id: string, workspace?: string) {
  if (workspace) workspaces.set(id, workspace);
  const queued = job(id);
  await store.insertJob(queued);
  await p.enqueue(queued);
}

const queuedRows = () => store.db.prepare("SELECT count(*) AS n FROM jobs WHERE status = 'queued'").get() as { n: number };
const turns = () => new Promise((resolve) => setImmediate(resolve));

beforeEach(() => {
  arrivals.clear();
  workspaces.clear();
  store = new SqliteStore(':memory:');
  ran = [];
  finish = new Map();
});

afterEach(() => store.close());

describe('the local worker pool', () => {
  it('lets a sync caller wait for a busy worker and stores its job once, already running', async () => {
    const p = pool(1);
    await runIn((await arrive(p, 'a', SYNC))!, 'a');
    let granted: JobSlot | null | undefined;
    void Promise.resolve(arrive(p, 'b', SYNC)).then((slot) => (granted = slot));
    await turns();
    expect(granted).toBeUndefined();
    finish.get('a')!();
    await turns();
    expect(granted).not.toBeNull();
    await runIn(granted!, 'b');
    await turns();
    expect(ran).toEqual(['a', 'b']);
    expect(queuedRows().n).toBe(0);
  });

  it('claims a queued job later when a claim fails, instead of throwing out of the finished job', async () => {
    const p = pool(1);
    await runIn((await arrive(p, 'a', SYNC))!, 'a');
    await queue(p, 'b');
    // The database refuses the claim made when 'a' ends (a write lock held past busy_timeout).
    const claim = store.claimQueued.bind(store);
    let refused = 0;
    store.claimQueued = (...args) => {
      if (refused++ === 0) throw new Error('database is locked');
      return claim(...args);
    };
    finish.get('a')!();
    // Before: the error escaped the job's promise chain (an unhandled rejection that stopped the
    // service) and 'b' waited in the table with no worker looking for it.
    await vi.waitFor(() => expect(ran).toEqual(['a', 'b']));
    expect(refused).toBe(2);
    expect(queuedRows().n).toBe(0);
  });

  it('sends a job whose caller does not wait through the queue table at once', async () => {
    const p = pool(1);
    await runIn((await arrive(p, 'a', SYNC))!, 'a');
    expect(arrive(p, 'b', ASYNC)).toBeNull();
  });

  it('keeps a waiting caller ahead of jobs queued after it, and those ahead of later callers', async () => {
    const p = pool(1);
    await runIn((await arrive(p, 'a', SYNC))!, 'a');
    const waiting = Promise.resolve(arrive(p, 'b', SYNC));
    expect(arrive(p, 'c', ASYNC)).toBeNull();
    await queue(p, 'c');
    // c is queued in the table now: a new sync caller goes behind it, not into memory.
    expect(arrive(p, 'd', SYNC)).toBeNull();
    await queue(p, 'd');
    finish.get('a')!();
    await runIn((await waiting)!, 'b');
    await turns();
    finish.get('b')!();
    await turns();
    finish.get('c')!();
    await turns();
    expect(ran).toEqual(['a', 'b', 'c', 'd']);
  });

  it('queues a caller that waited its time, and later callers behind it', async () => {
    const p = pool(1, 20);
    await runIn((await arrive(p, 'a', SYNC))!, 'a');
    const started = performance.now();
    expect(await arrive(p, 'b', SYNC)).toBeNull();
    expect(performance.now() - started).toBeGreaterThanOrEqual(19);
    await queue(p, 'b');
    expect(arrive(p, 'c', SYNC)).toBeNull();
    await queue(p, 'c');
    finish.get('a')!();
    await turns();
    finish.get('b')!();
    await turns();
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it('keeps the turn of callers who waited their time over a younger job queued meanwhile', async () => {
    const p = pool(1, 20);
    await runIn((await arrive(p, 'a', SYNC))!, 'a');
    const waits = ['b', 'c', 'd', 'e'].map((id) => arrive(p, id, SYNC));
    // Over four per worker: f goes to the queue table at once, before the older callers do.
    expect(arrive(p, 'f', SYNC)).toBeNull();
    await queue(p, 'f');
    const released = await Promise.all(waits.map((w) => Promise.resolve(w)));
    expect(released).toEqual([null, null, null, null]);
    for (const id of ['b', 'c', 'd', 'e']) await queue(p, id);
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      finish.get(id)!();
      await turns();
    }
    expect(ran).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('lets at most four callers per worker wait in memory', async () => {
    const p = pool(1);
    await runIn((await arrive(p, 'a', SYNC))!, 'a');
    const waits = ['b', 'c', 'd', 'e'].map((id) => arrive(p, id, SYNC));
    expect(waits.every((w) => w instanceof Promise)).toBe(true);
    expect(arrive(p, 'f', SYNC)).toBeNull();
    const stopped = p.stop();
    expect(await Promise.all(waits.map((w) => Promise.resolve(w)))).toEqual([null, null, null, null]);
    finish.get('a')!();
    await stopped;
  });

  it('hands callers still waiting at stop to the queue table, for the next start', async () => {
    const p = pool(1);
    await runIn((await arrive(p, 'a', SYNC))!, 'a');
    const waiting = Promise.resolve(arrive(p, 'b', SYNC));
    const stopped = p.stop();
    expect(await waiting).toBeNull();
    await queue(p, 'b');
    finish.get('a')!();
    await stopped;
    expect(ran).toEqual(['a']);
    expect(queuedRows().n).toBe(1);
  });
  it("gives a workspace's job the next free worker, however many jobs another workspace queued before it", async () => {
    const p = pool(1);
    const backlog = Array.from({ length: 20 }, (_, i) => `noisy${i}`);
    for (const id of backlog) await queue(p, id, 'noisy');
    await queue(p, 'quiet', 'quiet');
    for (let i = 0; i < 3; i++) {
      finish.get(ran[ran.length - 1])!();
      await turns();
    }
    // noisy0 held the worker; the next went to the workspace served longest ago.
    expect(ran.slice(0, 3)).toEqual(['noisy0', 'quiet', 'noisy1']);
  });

  it('takes turns between workspaces with jobs queued, and orders by priority only within a workspace', async () => {
    const p = pool(2);
    for (const id of ['a1', 'a2', 'a3', 'a4']) await queue(p, id, 'a');
    for (const id of ['b1', 'b2']) await queue(p, id, 'b');
    // b's author asks for the highest priority: it orders b's jobs, not a's.
    store.db.prepare("UPDATE jobs SET priority = 100 WHERE id = 'b2'").run();
    for (const id of ['c1']) await queue(p, id, 'c');
    while (ran.length < 7) {
      const oldest = ran.find((id) => finish.has(id))!;
      finish.get(oldest)!();
      finish.delete(oldest);
      await turns();
    }
    expect(ran).toEqual(['a1', 'a2', 'b2', 'c1', 'a3', 'b1', 'a4']);
  });

  it('gives a free worker to the waiting caller of the workspace with fewest jobs running', async () => {
    const p = pool(2);
    await runIn((await arrive(p, 'a1', SYNC, 'a'))!, 'a1');
    await runIn((await arrive(p, 'a2', SYNC, 'a'))!, 'a2');
    const waits = new Map(
      [
        ['a3', 'a'],
        ['a4', 'a'],
        ['b1', 'b'],
      ].map(([id, ws]) => [id, Promise.resolve(arrive(p, id, SYNC, ws)).then(async (slot) => runIn(slot!, id))]),
    );
    finish.get('a1')!();
    await turns();
    await waits.get('b1');
    expect(ran).toEqual(['a1', 'a2', 'b1']);
    finish.get('a2')!();
    await turns();
    await waits.get('a3');
    expect(ran).toEqual(['a1', 'a2', 'b1', 'a3']);
    finish.get('b1')!();
    finish.get('a3')!();
    await turns();
    await waits.get('a4');
    finish.get('a4')!();
    await turns();
  });
});
