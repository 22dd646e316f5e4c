import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { describeStoreContract } from './store.contract.js';
import { aJob, aScriptVersion, aWorkspace, nextTimestamp } from './store-fixtures.js';

describeStoreContract('SqliteStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-store-contract-'));
  const store = new SqliteStore(join(dir, 'svc.db'));
  return {
    store,
    cleanup: async () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

/** Another connection (the checkpoint thread's, in the service) holding the write lock for 300 ms. */
async function holdWriteLock(file: string): Promise<Worker> {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const holder = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     const db = new (require(workerData.driver))(workerData.file);
     db.exec('BEGIN IMMEDIATE');
     parentPort.postMessage('locked');
     setTimeout(() => { db.exec('COMMIT'); db.close(); }, 300);`,
    { eval: true, workerData: { driver, file } },
  );
  await once(holder, 'message');
  return holder;
}

describe('SqliteStore beside another connection', () => {
  it('waits for a write lock held elsewhere instead of failing a read-then-write transaction', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-store-lock-'));
    const file = join(dir, 'svc.db');
    const store = new SqliteStore(file);
    const ws = aWorkspace();
    await store.createWorkspace(ws);
    try {
      const holder = await holdWriteLock(file);
      // insertScriptVersion reads the path's head, then writes: one transaction.
      const version = aScriptVersion(ws.id, 'u/admin/locked');
      await expect(store.insertScriptVersion(version, null)).resolves.toBe(true);
      expect((await store.getLatestScript(ws.id, version.path))?.hash).toBe(version.hash);
      await once(holder, 'exit');
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("claims queued jobs once the lock is free: the pool's claim reads the queue before it writes", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-store-claim-lock-'));
    const file = join(dir, 'svc.db');
    const store = new SqliteStore(file);
    try {
      const ws = aWorkspace();
      await store.createWorkspace(ws);
      const queued = aJob(ws.id, { status: 'queued' });
      await store.insertJob(queued);
      const holder = await holdWriteLock(file);
      // Before: SQLITE_BUSY at once ("database is locked"), thrown into the pool, which crashed the service.
      const claimed = store.claimQueued(10, nextTimestamp(), '2999-01-01T00:00:00.000Z');
      expect(claimed.map((j) => [j.id, j.status])).toEqual([[queued.id, 'running']]);
      await once(holder, 'exit');
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SqliteStore queue indexes', () => {
  it('hold only queued and running jobs, and every queue query reads them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-store-queue-'));
    const store = new SqliteStore(join(dir, 'svc.db'));
    try {
      const ws = aWorkspace();
      await store.createWorkspace(ws);
      const queued = aJob(ws.id, { status: 'queued' });
      const running = aJob(ws.id, { status: 'running' });
      const finished = aJob(ws.id, { status: 'running' });
      for (const job of [queued, running, finished]) await store.insertJob(job);
      expect(await store.completeJob(finished.id, { status: 'success', result: 1, logs: '' }, nextTimestamp())).toBe(true);

      // A finished job leaves the queue's indexes: a run touches a small index, not one of every job ever run.
      const entries = (index: string, status: string) => store.db.prepare(`SELECT id FROM jobs INDEXED BY ${index} WHERE ${status}`).all().map((r) => (r as { id: string }).id).sort();
      expect(entries('jobs_active_by_age', "status = 'queued' OR status = 'running'")).toEqual([queued.id, running.id].sort());
      expect(entries('jobs_queued_by_workspace', "status = 'queued'")).toEqual([queued.id]);

      const later = '2999-01-01T00:00:00.000Z';
      expect((await store.listStaleJobs('running', later, 10)).map((j) => j.id)).toEqual([running.id]);
      expect((await store.listStaleJobs('queued', later, 10)).map((j) => j.id)).toEqual([queued.id]);
      expect(store.claimQueued(10, nextTimestamp(), later).map((j) => j.id)).toEqual([queued.id]);
      const plans = [
        "SELECT * FROM jobs WHERE status = 'queued' AND created_at < ? ORDER BY created_at, rowid LIMIT 1",
        "SELECT MIN(workspace_id) FROM jobs WHERE status = 'queued' AND held = 0 AND workspace_id > ?",
        "SELECT rowid FROM jobs WHERE status = 'queued' AND held = 0 AND workspace_id = ? ORDER BY priority DESC, created_at, rowid LIMIT 1",
        "SELECT id FROM jobs WHERE status = 'running'",
      ].map((sql) => (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(sql.includes('?') ? [later] : [])) as { detail: string }[]).map((r) => r.detail).join(' '));
      // The claim's walk over workspaces and each one's next job are seeks in the queued jobs' index.
      expect(plans).toEqual([
        expect.stringContaining('jobs_active_by_age'),
        expect.stringContaining('jobs_queued_by_workspace (held=? AND workspace_id>?)'),
        expect.stringContaining('jobs_queued_by_workspace (held=? AND workspace_id=?)'),
        expect.stringContaining('jobs_active_by_age'),
      ]);
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SqliteStore, a flow run stored with its next jobs', () => {
  it('commits both in one transaction: a job that cannot be inserted leaves the run unchanged too', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const ws = aWorkspace();
      await store.createWorkspace(ws);
      const at = nextTimestamp();
      const run = { kind: 'flow_run' as const, workspace_id: ws.id, key: 'f1', value: { index: 0 }, version: 1, created_at: at, updated_at: at };
      const existing = aJob(ws.id);
      await store.insertJob(existing);
      expect(await store.createEntity(run)).toBe(true);
      const next = { ...run, value: { index: 1 }, version: 2, updated_at: nextTimestamp() };
      // Its id is taken: the insert fails, and the replace is undone with it.
      await expect(store.replaceEntity(next, 1, [], [aJob(ws.id), existing])).rejects.toThrow();
      expect((await store.getEntity('flow_run', ws.id, 'f1'))?.version).toBe(1);

      const fresh = aJob(ws.id);
      expect(await store.replaceEntity(next, 1, [], [fresh])).toBe(true);
      expect(await store.getJob(ws.id, fresh.id)).not.toBeNull();
      expect((await store.getEntity('flow_run', ws.id, 'f1'))?.version).toBe(2);
    } finally {
      store.close();
    }
  });
});
