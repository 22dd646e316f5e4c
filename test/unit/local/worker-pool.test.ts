import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
      ran.push(id);
      await new Promise<void>((resolve) => finish.set(id, resolve));
    },
  });
  p.start({ clock: { now: () => new Date() }, config: { jobTimeoutMs: 60_000 } } as unknown as WorkerDeps);
  return p;
}

/** Each job is made when its caller arrives (reserve), as the core makes it; later ones are younger. */
const arrivals = new Map<string, string>();
let clockMs = Date.UTC(2026, 0, 1);
function arrive(p: LocalWorkerPool, id: string, intent: RunIntent) {
  arrivals.set(id, new Date((clockMs += 1)).toISOString());
  return p.reserve(id, intent);
}

function job(id: string): Job {
  return queuedJob(arrivals.get(id) ?? new Date((clockMs += 1)).toISOString(), {
    id,
    workspace_id: 'main',
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
async function queue(p: LocalWorkerPool, id: string) {
  const queued = job(id);
  await store.insertJob(queued);
  await p.enqueue(queued);
}

const queuedRows = () => store.db.prepare("SELECT count(*) AS n FROM jobs WHERE status = 'queued'").get() as { n: number };
const turns = () => new Promise((resolve) => setImmediate(resolve));

beforeEach(() => {
  arrivals.clear();
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
});
