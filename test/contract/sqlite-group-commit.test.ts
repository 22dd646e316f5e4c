import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GroupCommit } from '../../functions/adapters/local/sqlite-group-commit.js';

/** What a writer is told against what another connection (another process, a restart) can read. */
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function open() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-group-'));
  dirs.push(dir);
  const file = join(dir, 'db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
  const other = new Database(file, { readonly: true });
  const seen = () => (other.prepare('SELECT k FROM t ORDER BY k').all() as { k: string }[]).map((r) => r.k);
  return { db, group: new GroupCommit(db), seen };
}

describe('SQLite group commit', () => {
  it('acknowledges no write before it is committed, and writes of one round commit together', async () => {
    const { db, group, seen } = open();
    const insert = (k: string) => group.write(() => db.prepare('INSERT INTO t VALUES (?)').run(k).changes);
    const a = insert('a');
    const b = insert('b');
    let acknowledged = false;
    void a.then(() => (acknowledged = true));
    await Promise.resolve();
    expect(acknowledged).toBe(false);
    expect(seen()).toEqual([]);
    expect(await a).toBe(1);
    // When the first writer hears back, the second's row is as durable as its own.
    expect(seen()).toEqual(['a', 'b']);
    expect(await b).toBe(1);
  });

  it('fails only the writer whose statement failed; the rest of its round is stored', async () => {
    const { db, group, seen } = open();
    const insert = (k: string) => group.write(() => db.prepare('INSERT INTO t VALUES (?)').run(k).changes);
    const results = await Promise.allSettled([insert('a'), insert('a'), insert('b')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(seen()).toEqual(['a', 'b']);
  });

  it('fails every writer of a round whose commit fails, and stores none of it', async () => {
    const { db, group, seen } = open();
    const insert = (k: string) => group.write(() => db.prepare('INSERT INTO t VALUES (?)').run(k).changes);
    // A deferred foreign key is checked at commit: the whole round is refused there.
    db.exec('CREATE TABLE child (k TEXT REFERENCES t(k) DEFERRABLE INITIALLY DEFERRED)');
    db.pragma('foreign_keys = ON');
    const orphan = group.write(() => db.prepare('INSERT INTO child VALUES (?)').run('nobody').changes);
    const results = await Promise.allSettled([insert('a'), orphan]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(seen()).toEqual([]);
    // The next round starts clean.
    expect(await insert('b')).toBe(1);
    expect(seen()).toEqual(['b']);
  });

  it("leaves a caller's own transaction to the caller", async () => {
    const { db, group, seen } = open();
    db.transaction(() => {
      void group.write(() => db.prepare('INSERT INTO t VALUES (?)').run('a'));
      void group.write(() => db.prepare('INSERT INTO t VALUES (?)').run('b'));
    })();
    expect(seen()).toEqual(['a', 'b']);
  });
});
