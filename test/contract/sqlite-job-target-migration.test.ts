import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { MIGRATIONS } from '../../functions/adapters/local/sqlite-schema.js';
import { StoredDocumentError } from '../../functions/core/documents/parse.js';

/** A data directory written before jobs had their own target fields opens with its jobs intact. */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function oldDatabase(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-migration-'));
  dirs.push(dir);
  const file = join(dir, 'svc.db');
  const db = new Database(file);
  const before = MIGRATIONS.findIndex((sql) => sql.includes('-- typed:'));
  for (let v = 0; v < before; v++) db.exec(MIGRATIONS[v]);
  db.pragma(`user_version = ${before}`);
  const insert = db.prepare(
    `INSERT INTO jobs (id, workspace_id, kind, script_path, script_hash, language, args, status, created_by, created_at, parent_job)
     VALUES (?, 'ws', ?, ?, ?, 'python3', '{"n":1}', 'queued', 'alice', ?, ?)`,
  );
  insert.run('script-job', 'script', 'f/a/s', 'abc123', '2026-01-01T00:00:01.000Z', null);
  insert.run('flow-job', 'flow', 'f/a/flow', '17', '2026-01-01T00:00:02.000Z', null);
  insert.run('step-job', 'flowstep', 'f/a/flow/a', '17:a', '2026-01-01T00:00:03.000Z', 'flow-job');
  db.close();
  return file;
}

describe('SQLite migration of job targets', () => {
  it('moves a flow version out of script_hash into flow_version and flow_module', async () => {
    const store = new SqliteStore(oldDatabase());
    try {
      expect(await store.getJob('ws', 'script-job')).toMatchObject({ kind: 'script', script_hash: 'abc123', flow_version: null, flow_module: null, args: { n: 1 } });
      expect(await store.getJob('ws', 'flow-job')).toMatchObject({ kind: 'flow', script_hash: null, flow_version: 17, flow_module: null });
      expect(await store.getJob('ws', 'step-job')).toMatchObject({ kind: 'flowstep', script_hash: null, flow_version: 17, flow_module: 'a', parent_job: 'flow-job' });
      // Queue order (rowid) survives the table rebuild.
      expect(store.claimQueued(10, '2026-01-02T00:00:00.000Z', '2026-01-02T01:00:00.000Z').map((j) => j.id)).toEqual(['script-job', 'flow-job', 'step-job']);
    } finally {
      store.close();
    }
  });

  it('refuses a stored job whose fields contradict its kind with a clear error', async () => {
    const file = oldDatabase();
    const store = new SqliteStore(file);
    try {
      store.db.prepare(`UPDATE jobs SET flow_version = NULL WHERE id = 'flow-job'`).run();
      const read = store.getJob('ws', 'flow-job');
      await expect(read).rejects.toBeInstanceOf(StoredDocumentError);
      await expect(store.getJob('ws', 'flow-job')).rejects.toMatchObject({ code: 'invalid_stored_document', message: expect.stringContaining('job flow-job') });
    } finally {
      store.close();
    }
  });
});
