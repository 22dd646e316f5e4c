import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { MIGRATIONS } from '../../functions/adapters/local/sqlite-schema.js';
import { anEntity, aWorkspace } from './store-fixtures.js';

/**
 * The workspaces a user belongs to (Store.listMemberWorkspaces) and their invitations
 * (listInvitesOf) are a seek in the partial indexes `members_by_user` and `invites_by_user`, not a
 * read in every workspace; a data directory written before them answers the same once opened (the
 * migration builds them over the entities stored).
 */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-members-'));
  dirs.push(dir);
  return join(dir, 'svc.db');
}

describe('SQLite members index', () => {
  it('lists the members stored before the index once the data directory is opened', async () => {
    const file = dataFile();
    const db = new Database(file);
    const before = MIGRATIONS.findIndex((sql) => sql.includes('-- memberindex:'));
    expect(before).toBeGreaterThan(0);
    for (let v = 0; v < before; v++) db.exec(MIGRATIONS[v]);
    db.pragma(`user_version = ${before}`);
    const [a, b, c] = [aWorkspace({ id: 'ws-a' }), aWorkspace({ id: 'ws-b' }), aWorkspace({ id: 'ws-c' })];
    const addWorkspace = db.prepare('INSERT INTO workspaces (id, name, created_at, object_storage_enabled) VALUES (?, ?, ?, 0)');
    for (const ws of [a, b, c]) addWorkspace.run(ws.id, ws.name, ws.created_at);
    const old = [anEntity('member', 'ws-b', 'ada'), anEntity('member', 'ws-a', 'ada'), anEntity('member', 'ws-c', 'bob'), anEntity('invite', 'ws-c', 'ada'), anEntity('member', 'ws-gone', 'ada')];
    const insert = db.prepare('INSERT INTO entities (kind, workspace_id, key, value, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    for (const e of old) insert.run(e.kind, e.workspace_id, e.key, JSON.stringify(e.value), e.version, e.created_at, e.updated_at);
    db.close();

    const store = new SqliteStore(file);
    try {
      expect((await store.listMemberWorkspaces('ada')).map((w) => w.id)).toEqual(['ws-a', 'ws-b']);
      expect((await store.listMemberWorkspaces('bob')).map((w) => w.id)).toEqual(['ws-c']);
      expect((await store.listInvitesOf('ada')).map((e) => [e.kind, e.workspace_id])).toEqual([['invite', 'ws-c']]);
      // Kept by member writes from then on.
      await store.createEntity(anEntity('member', 'ws-c', 'ada'));
      expect(await store.deleteEntity('member', 'ws-a', 'ada')).toBe(true);
      expect((await store.listMemberWorkspaces('ada')).map((w) => w.id)).toEqual(['ws-b', 'ws-c']);
    } finally {
      store.close();
    }
  });

  it("reads a user's memberships and invitations by a seek in an index", () => {
    const store = new SqliteStore(':memory:');
    try {
      const plan = (store.db.prepare(`EXPLAIN QUERY PLAN SELECT w.* FROM entities e JOIN workspaces w ON w.id = e.workspace_id WHERE e.kind = 'member' AND e.key = ? ORDER BY e.workspace_id`).all('ada') as { detail: string }[])
        .map((r) => r.detail)
        .join(' | ');
      expect(plan).toContain('members_by_user (key=?)');
      expect(plan).not.toMatch(/SCAN (e|entities|w|workspaces)\b/);
      const invites = (store.db.prepare(`EXPLAIN QUERY PLAN SELECT * FROM entities WHERE kind = 'invite' AND key = ? ORDER BY workspace_id`).all('ada') as { detail: string }[]).map((r) => r.detail).join(' | ');
      expect(invites).toContain('invites_by_user (key=?)');
      expect(invites).not.toContain('TEMP B-TREE');
    } finally {
      store.close();
    }
  });
});
