import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { describeStoreContract } from './store.contract.js';
import { aScriptVersion, aWorkspace } from './store-fixtures.js';

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

describe('SqliteStore beside another connection', () => {
  it('waits for a write lock held elsewhere instead of failing a read-then-write transaction', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-store-lock-'));
    const file = join(dir, 'svc.db');
    const store = new SqliteStore(file);
    const ws = aWorkspace();
    await store.createWorkspace(ws);
    try {
      // Another connection (the checkpoint thread's, in the service) holds the write lock 300 ms.
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
});
