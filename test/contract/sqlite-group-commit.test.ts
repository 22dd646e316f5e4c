import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { GroupCommit } from '../../functions/adapters/local/sqlite-group-commit.js';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { aJob, aWorkspace, FAR_FUTURE, nextTimestamp } from './store-fixtures.js';

/**
 * What a writer is told against what another connection (another process, the service after a
 * kill -9) can read: nothing is acknowledged before it is committed, and concurrent writes share
 * one commit.
 */
const dirs: string[] = [];
const closers: Array<() => void> = [];
afterEach(() => {
  closers.splice(0).forEach((close) => close());
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function tempFile() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-group-'));
  dirs.push(dir);
  return join(dir, 'svc.db');
}

/** A second connection to the file: it sees committed data only. */
function observer(file: string) {
  const other = new Database(file, { readonly: true });
  closers.push(() => other.close());
  return other;
}

function table() {
  const file = tempFile();
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
  closers.push(() => db.close());
  const other = observer(file);
  const committed = () => (other.prepare('SELECT k FROM t ORDER BY k').all() as { k: string }[]).map((r) => r.k);
  const visibleHere = () => (db.prepare('SELECT k FROM t ORDER BY k').all() as { k: string }[]).map((r) => r.k);
  const group = new GroupCommit(db);
  const insert = (k: string) => group.write(() => db.prepare('INSERT INTO t VALUES (?)').run(k).changes);
  return { db, group, insert, committed, visibleHere };
}

describe('SQLite group commit', () => {
  it('acknowledges no write before its commit, and no read sees a write before it is committed', async () => {
    const { insert, committed, visibleHere } = table();
    const a = insert('a');
    const b = insert('b');
    let acknowledged = false;
    void a.then(() => (acknowledged = true));
    await Promise.resolve();
    expect(acknowledged).toBe(false);
    // Queued, not run: neither another connection nor this one can read it yet.
    expect(committed()).toEqual([]);
    expect(visibleHere()).toEqual([]);
    expect(await a).toBe(1);
    // When the first writer hears back, its round (the second write too) is committed.
    expect(committed()).toEqual(['a', 'b']);
    expect(await b).toBe(1);
  });

  it('fails only the writer whose statement failed; the rest of its round is stored', async () => {
    const { insert, committed } = table();
    const results = await Promise.allSettled([insert('a'), insert('a'), insert('b')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(committed()).toEqual(['a', 'b']);
  });

  it('undoes a failing write whole, even the statements it ran before failing', async () => {
    const { db, group, insert, committed } = table();
    const half = group.write(() => {
      db.prepare('INSERT INTO t VALUES (?)').run('half');
      throw new Error('the write gives up');
    });
    const results = await Promise.allSettled([half, insert('c')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    expect(committed()).toEqual(['c']);
  });

  it('fails every writer of a round whose commit fails, and stores none of it', async () => {
    const { db, group, insert, committed } = table();
    // A deferred foreign key is checked at commit: the whole round is refused there.
    db.exec('CREATE TABLE child (k TEXT REFERENCES t(k) DEFERRABLE INITIALLY DEFERRED)');
    db.pragma('foreign_keys = ON');
    const orphan = group.write(() => db.prepare('INSERT INTO child VALUES (?)').run('nobody').changes);
    const results = await Promise.allSettled([insert('a'), orphan]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(committed()).toEqual([]);
    // The next round starts clean.
    expect(await insert('b')).toBe(1);
    expect(committed()).toEqual(['b']);
  });

  it('refuses a lone write that fails, at its statement or at its commit, and stores nothing of it', async () => {
    const { db, group, insert, committed } = table();
    expect(await insert('a')).toBe(1);
    await expect(insert('a')).rejects.toThrow(/UNIQUE/);
    db.exec('CREATE TABLE child (k TEXT REFERENCES t(k) DEFERRABLE INITIALLY DEFERRED)');
    db.pragma('foreign_keys = ON');
    await expect(group.write(() => db.prepare('INSERT INTO child VALUES (?)').run('nobody').changes)).rejects.toThrow(/FOREIGN KEY/);
    expect(db.inTransaction).toBe(false);
    expect(await insert('b')).toBe(1);
    expect(committed()).toEqual(['a', 'b']);
  });

  it("leaves a caller's own transaction to the caller", async () => {
    const { db, insert, committed } = table();
    db.transaction(() => {
      void insert('a');
      void insert('b');
    })();
    expect(committed()).toEqual(['a', 'b']);
  });
});

describe('SQLite store writes', () => {
  async function store() {
    const file = tempFile();
    const s = new SqliteStore(file);
    closers.push(() => s.close());
    const ws = aWorkspace();
    await s.createWorkspace(ws);
    return { s, ws: ws.id, other: observer(file), file };
  }

  it("resolves a job's insert and completion only once another connection can read them", async () => {
    const { s, ws, other } = await store();
    const job = aJob(ws, { status: 'running', started_at: nextTimestamp(), attempts: 1 });
    const read = () => other.prepare('SELECT status, result FROM jobs WHERE id = ?').get(job.id) as { status: string; result: string } | undefined;
    const inserted = s.insertJob(job);
    expect(read()).toBeUndefined();
    await inserted;
    expect(read()).toMatchObject({ status: 'running' });
    const completed = s.completeJob(job.id, { status: 'success', result: { ok: true }, logs: '' }, nextTimestamp());
    expect(read()).toMatchObject({ status: 'running' });
    expect(await completed).toBe(true);
    expect(read()).toEqual({ status: 'success', result: '{"ok":true}' });
  });

  it('writes the pages of sixteen concurrent runs to the WAL once, not once per run', async () => {
    const { s, ws, file } = await store();
    // No checkpoint: the WAL only grows, by a frame for each page each commit writes.
    s.db.pragma('wal_autocheckpoint = 0');
    const walBytes = () => statSync(`${file}-wal`).size;
    let before = walBytes();
    for (let i = 0; i < 16; i++) await s.insertJob(aJob(ws));
    const oneByOne = walBytes() - before;
    before = walBytes();
    await Promise.all(Array.from({ length: 16 }, () => s.insertJob(aJob(ws))));
    const together = walBytes() - before;
    expect(together).toBeGreaterThan(0);
    expect(together).toBeLessThan(oneByOne / 4);
    expect(s.db.prepare('SELECT count(*) AS n FROM jobs').get()).toEqual({ n: 32 });
  });
});
