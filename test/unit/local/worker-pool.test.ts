import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalWorkerPool } from '../../../functions/adapters/local/worker-pool.js';
import { SqliteStore } from '../../../functions/adapters/local/sqlite-store.js';
import { queuedJob } from '../../../functions/core/jobs.js';
import { scriptJobTarget } from '../../../functions/core/run-target.js';
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

function pool(concurrency: number, callerWaitMs?: number): LocalWorkerPool {
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

function job(id: string): Job {
  return queuedJob(new Date().toISOString(), {
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
  store = new SqliteStore(':memory:');
  ran = [];
  finish = new Map();
});

afterEach(() => store.close());

describe('the local worker pool', () => {
  it('lets a sync caller wait for a busy worker and stores its job once, already running', async () => {
    const p = pool(1);
    await runIn((await p.reserve('a', SYNC))!, 'a');
    let granted: JobSlot | null | undefined;
    void Promise.resolve(p.reserve('b', SYNC)).then((slot) => (granted = slot));
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
    await runIn((await p.reserve('a', SYNC))!, 'a');
    expect(p.reserve('b', ASYNC)).toBeNull();
  });

  it('keeps a waiting caller ahead of jobs queued after it, and those ahead of later callers', async () => {
    const p = pool(1);
    await runIn((await p.reserve('a', SYNC))!, 'a');
    const waiting = Promise.resolve(p.reserve('b', SYNC));
    expect(p.reserve('c', ASYNC)).toBeNull();
    await queue(p, 'c');
    // c is queued in the table now: a new sync caller goes behind it, not into memory.
    expect(p.reserve('d', SYNC)).toBeNull();
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
    await runIn((await p.reserve('a', SYNC))!, 'a');
    const started = performance.now();
    expect(await p.reserve('b', SYNC)).toBeNull();
    expect(performance.now() - started).toBeGreaterThanOrEqual(19);
    await queue(p, 'b');
    expect(p.reserve('c', SYNC)).toBeNull();
    await queue(p, 'c');
    finish.get('a')!();
    await turns();
    finish.get('b')!();
    await turns();
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it('lets at most four callers per worker wait in memory', async () => {
    const p = pool(1);
    await runIn((await p.reserve('a', SYNC))!, 'a');
    const waits = ['b', 'c', 'd', 'e'].map((id) => p.reserve(id, SYNC));
    expect(waits.every((w) => w instanceof Promise)).toBe(true);
    expect(p.reserve('f', SYNC)).toBeNull();
    const stopped = p.stop();
    expect(await Promise.all(waits.map((w) => Promise.resolve(w)))).toEqual([null, null, null, null]);
    finish.get('a')!();
    await stopped;
  });

  it('hands callers still waiting at stop to the queue table, for the next start', async () => {
    const p = pool(1);
    await runIn((await p.reserve('a', SYNC))!, 'a');
    const waiting = Promise.resolve(p.reserve('b', SYNC));
    const stopped = p.stop();
    expect(await waiting).toBeNull();
    await queue(p, 'b');
    finish.get('a')!();
    await stopped;
    expect(ran).toEqual(['a']);
    expect(queuedRows().n).toBe(1);
  });
});
