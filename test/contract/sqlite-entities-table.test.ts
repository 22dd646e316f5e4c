import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { MIGRATIONS } from '../../functions/adapters/local/sqlite-schema.js';
import { anEntity, aWorkspace } from './store-fixtures.js';

/**
 * Entities (flow runs, flow versions, resources...) are read on every flow turn: a document of a
 * few KB must stay in its table page, where SQLite's page cache keeps it, not in overflow pages,
 * which SQLite reads from the file with a system call each on every read.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-entities-'));
  dirs.push(dir);
  return join(dir, 'svc.db');
}

const overflowPages = (db: Database.Database) => (db.prepare(`SELECT count(*) AS n FROM dbstat WHERE name = 'entities' AND pagetype = 'overflow'`).get() as { n: number }).n;

describe('SQLite entities table', () => {
  it('keeps a document of 3 KB in its page, not in overflow pages', async () => {
    const store = new SqliteStore(dataFile());
    try {
      const ws = aWorkspace();
      await store.createWorkspace(ws);
      // A flow run of a few dozen steps is about this size.
      const value = { results: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`step_${i}`, { n: i, note: 'x'.repeat(24) }])) };
      expect(JSON.stringify(value).length).toBeGreaterThan(3000);
      const e = anEntity('flow_run', ws.id, 'run-1', { value });
      expect(await store.createEntity(e)).toBe(true);
      expect(overflowPages(store.db)).toBe(0);
      expect(await store.replaceEntity({ ...e, value: { ...value, more: 'y'.repeat(500) }, version: 2 }, 1)).toBe(true);
      expect(overflowPages(store.db)).toBe(0);
      expect((await store.getEntity('flow_run', ws.id, 'run-1'))?.value).toEqual({ ...value, more: 'y'.repeat(500) });
    } finally {
      store.close();
    }
  });

  it('opens a data directory written before with its entities, versions and keys intact', async () => {
    const file = dataFile();
    const db = new Database(file);
    const before = MIGRATIONS.findIndex((sql) => sql.includes('-- rowidentities:'));
    expect(before).toBeGreaterThan(0);
    for (let v = 0; v < before; v++) db.exec(MIGRATIONS[v]);
    db.pragma(`user_version = ${before}`);
    const old = [anEntity('resource', 'ws', 'f/a/b', { version: 3 }), anEntity('resource', 'ws', 'f/a'), anEntity('flow_run', 'ws', 'f/a', { value: { big: 'z'.repeat(2500) } })];
    const insert = db.prepare('INSERT INTO entities (kind, workspace_id, key, value, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    for (const e of old) insert.run(e.kind, e.workspace_id, e.key, JSON.stringify(e.value), e.version, e.created_at, e.updated_at);
    db.close();

    const store = new SqliteStore(file);
    try {
      for (const e of old) expect(await store.getEntity(e.kind, e.workspace_id, e.key)).toEqual(e);
      expect((await store.listEntities('resource', 'ws')).map((e) => e.key)).toEqual(['f/a', 'f/a/b']);
      // A key is still taken once per kind and workspace, and versions still guard replaces.
      expect(await store.createEntity(anEntity('resource', 'ws', 'f/a'))).toBe(false);
      expect(await store.replaceEntity({ ...old[0]!, version: 4 }, 2)).toBe(false);
      expect(await store.replaceEntity({ ...old[0]!, value: { changed: true }, version: 4 }, 3)).toBe(true);
      expect((await store.getEntity('resource', 'ws', 'f/a/b'))?.value).toEqual({ changed: true });
      expect(overflowPages(store.db)).toBe(0);
    } finally {
      store.close();
    }
  });
});
