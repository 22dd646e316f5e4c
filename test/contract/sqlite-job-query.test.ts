import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { BROAD_PREFIX_ROWS, broadPrefix } from '../../functions/adapters/local/sqlite-job-query.js';
import { aJob, aWorkspace } from './store-fixtures.js';

/**
 * The SQLite run list reads a broad path prefix in time order instead of by the path index (a
 * plan choice, see sqlite-job-query.ts): the answer must be the same, in the same order.
 */
const dir = mkdtempSync(join(tmpdir(), 'svc-job-query-'));
const store = new SqliteStore(join(dir, 'svc.db'));
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SQLite run list, broad path prefix', () => {
  it('pages through a prefix matching more than the threshold in order, by either plan', async () => {
    const ws = aWorkspace();
    await store.createWorkspace(ws);
    const start = Date.parse('2026-03-01T00:00:00Z');
    const jobs = Array.from({ length: BROAD_PREFIX_ROWS * 2 }, (_, i) =>
      aJob(ws.id, { script_path: i % 3 === 0 ? 'f/other/x' : `f/many/s${i % 7}`, created_at: new Date(start + Math.floor(i / 2) * 1000).toISOString() }),
    );
    store.db.transaction(() => jobs.forEach((j) => void store.insertJob(j)))();
    const expected = jobs
      .filter((j) => j.script_path.startsWith('f/many/'))
      .sort((a, b) => (a.created_at === b.created_at ? (a.id > b.id ? -1 : 1) : a.created_at > b.created_at ? -1 : 1))
      .map((j) => j.id);
    const q = { workspace_id: ws.id, path_prefix: 'f/many/', limit: 100 };
    expect(expected.length).toBeGreaterThan(BROAD_PREFIX_ROWS);
    expect(broadPrefix(store.db, q)).toBe(true);
    expect(broadPrefix(store.db, { ...q, path_prefix: 'f/many/s1' })).toBe(false);
    const first = await store.queryJobs(q);
    expect(first.map((j) => j.id)).toEqual(expected.slice(0, 100));
    const last = first.at(-1)!;
    expect((await store.queryJobs({ ...q, after: { created_at: last.created_at, id: last.id } })).map((j) => j.id)).toEqual(expected.slice(100, 200));
    expect((await store.queryJobs({ ...q, path_prefix: 'f/many/s1', limit: 5 })).map((j) => j.id)).toEqual(
      expected.filter((id) => jobs.find((j) => j.id === id)!.script_path === 'f/many/s1').slice(0, 5),
    );
  });
});
