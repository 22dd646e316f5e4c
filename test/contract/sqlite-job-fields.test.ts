import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { MIGRATIONS } from '../../functions/adapters/local/sqlite-schema.js';
import { planJobQuery } from '../../functions/adapters/local/sqlite-job-query.js';
import { MAX_FIELDS, MAX_TEXT_BYTES, RARE_VALUE_ROWS } from '../../functions/adapters/local/sqlite-job-fields.js';
import { jsonSubset } from '../../functions/core/store/json-subset.js';
import type { Job, JobQuery } from '../../functions/ports.js';
import { aJob, aWorkspace, FAR_FUTURE } from './store-fixtures.js';

/**
 * The SQLite run list looks a rare args or result value up in job_fields (migration argsidx)
 * instead of scanning the history: the answer must be what a scan gives, in the same order, and
 * the index must follow every write, scrubbing included.
 */
const dir = mkdtempSync(join(tmpdir(), 'svc-job-fields-'));
const store = new SqliteStore(join(dir, 'svc.db'));
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const START = Date.parse('2026-04-01T00:00:00Z');
const at = (i: number) => new Date(START + i * 1000).toISOString();
const ids = (jobs: Job[]) => jobs.map((j) => j.id);
const newestFirst = (jobs: Job[]) => [...jobs].sort((a, b) => (a.created_at === b.created_at ? (a.id > b.id ? -1 : 1) : a.created_at > b.created_at ? -1 : 1));

/** What a scan of every job answers: the reference the index plan must agree with. */
function scan(jobs: Job[], q: Omit<JobQuery, 'workspace_id' | 'limit'>): string[] {
  return ids(newestFirst(jobs.filter((j) => (!q.status || j.status === q.status) && (!q.args || jsonSubset(j.args, q.args)))));
}

async function history(count: number, args: (i: number) => Record<string, unknown>) {
  const ws = aWorkspace();
  await store.createWorkspace(ws);
  const jobs = Array.from({ length: count }, (_, i) => aJob(ws.id, { args: args(i), created_at: at(Math.floor(i / 2)) }));
  store.db.transaction(() => jobs.forEach((j) => void store.insertJob(j)))();
  return { ws: ws.id, jobs };
}

describe('SQLite run list, args and result through job_fields', () => {
  it('finds a rare value on a page, newest first, and pages on by cursor', async () => {
    const { ws, jobs } = await history(RARE_VALUE_ROWS + 1000, (i) => ({ customer: i % 997 === 5 ? 'rare' : `c${i % 50}`, env: 'dev', n: i }));
    const q: JobQuery = { workspace_id: ws, args: { customer: 'rare' }, limit: 3 };
    expect(planJobQuery(store.db, q).lookup).toMatchObject({ field: 'args', key: 'customer', value: 'rare' });
    const expected = scan(jobs, q);
    expect(expected.length).toBe(7);
    const first = await store.queryJobs(q);
    expect(ids(first)).toEqual(expected.slice(0, 3));
    const last = first.at(-1)!;
    expect(ids(await store.queryJobs({ ...q, after: { created_at: last.created_at, id: last.id } }))).toEqual(expected.slice(3, 6));
    // With the other filters still applied on the row, and the rest of the pattern too.
    await store.claimJob(expected[1], at(99_999), FAR_FUTURE);
    expect(ids(await store.queryJobs({ ...q, status: 'running', limit: 50 }))).toEqual([expected[1]]);
    expect(ids(await store.queryJobs({ ...q, args: { customer: 'rare', env: 'prod' }, limit: 50 }))).toEqual([]);
    // A common value with a status filter is read by the jobs indexes; the answer is the same.
    const common: JobQuery = { workspace_id: ws, args: { env: 'dev' }, status: 'queued', limit: 5 };
    expect(planJobQuery(store.db, common).lookup ?? null).toBeNull();
    expect(ids(await store.queryJobs(common))).toEqual(scan(jobs, common).slice(0, 5));
  });

  it('keeps JSON types apart: a number, the string spelling it, true and null', async () => {
    const { ws } = await history(4, (i) => [{ v: 1 }, { v: '1' }, { v: true }, { v: null }][i]);
    const one = async (v: unknown) => (await store.queryJobs({ workspace_id: ws, args: { v }, limit: 10 })).map((j) => j.args?.v);
    expect(await one(1)).toEqual([1]);
    expect(await one(1.0)).toEqual([1]);
    expect(await one('1')).toEqual(['1']);
    expect(await one(true)).toEqual([true]);
    expect(await one('true')).toEqual([]);
    expect(await one(null)).toEqual([null]);
  });

  it('finds jobs beyond the bounds: too many keys, a long string, an unusual key, a nested value', async () => {
    const many = Object.fromEntries(Array.from({ length: MAX_FIELDS + 1 }, (_, k) => [`k${k}`, k]));
    const long = 'é'.repeat(MAX_TEXT_BYTES); // 2 bytes each: over the cap
    const { ws, jobs } = await history(4, (i) => [{ ...many, tag: 'x' }, { tag: long }, { '': 'blank', tag: 'y' }, { tag: 'x', deep: { a: [1] } }][i]);
    const q = (args: Record<string, unknown>) => store.queryJobs({ workspace_id: ws, args, limit: 10 });
    expect(ids(await q({ tag: 'x' }))).toEqual(scan(jobs, { args: { tag: 'x' } }));
    expect(ids(await q({ tag: 'x' })).length).toBe(2);
    expect(ids(await q({ k32: 32 }))).toEqual([jobs[0].id]);
    expect(ids(await q({ tag: long }))).toEqual([jobs[1].id]);
    expect(ids(await q({ '': 'blank' }))).toEqual([jobs[2].id]);
    expect(ids(await q({ tag: 'x', deep: { a: [1] } }))).toEqual([jobs[3].id]);
    expect(ids(await q({ tag: 'x', deep: { a: [2] } }))).toEqual([]);
  });

  it("writes on insert exactly the rows the update trigger computes for the same args", async () => {
    const many = Object.fromEntries(Array.from({ length: MAX_FIELDS + 1 }, (_, k) => [`k${k}`, k]));
    const docs = [
      { s: 'plain', quote: 'a "quoted"\\ line\nand\u0001control', n: 42, neg: -0, r: 1.5, big: 1e21, t: true, f: false, z: null },
      { long: 'é'.repeat(MAX_TEXT_BYTES), ok: 'é'.repeat(MAX_TEXT_BYTES / 2), '': 'blank', ['k'.repeat(65)]: 1, ['é'.repeat(32)]: 'key of 64 bytes' },
      { nested: { a: 1 }, list: [1, 2], emoji: '🙂', __proto__: 'own key' },
      many,
      {},
    ];
    const { jobs } = await history(docs.length, (i) => JSON.parse(JSON.stringify(docs[i])));
    const rows = (id: string) => store.db.prepare('SELECT field, key, value, typeof(value) AS t, workspace_id, created_at FROM job_fields WHERE job_id = ? ORDER BY field, key').all(id);
    for (const job of jobs) {
      const inserted = rows(job.id);
      // The update trigger recomputes the args rows from the stored document.
      store.db.prepare('UPDATE jobs SET args = json(args) WHERE id = ?').run(job.id);
      expect(rows(job.id).map((r) => ({ ...(r as object), t: undefined }))).toEqual(inserted.map((r) => ({ ...(r as object), t: undefined })));
    }
    expect(rows(jobs[3].id)).toMatchObject([{ key: '', value: null }]);
  });

  it('follows completion for results, and a scrubbed job is no longer findable by its args or result', async () => {
    const { ws, jobs } = await history(3, (i) => ({ order: `o-${i}` }));
    const [job] = jobs;
    await store.claimJob(job.id, at(100), FAR_FUTURE);
    await store.completeJob(job.id, { status: 'success', result: { invoice: 'inv-9' }, logs: '' }, at(101));
    expect(ids(await store.queryJobs({ workspace_id: ws, result: { invoice: 'inv-9' }, limit: 10 }))).toEqual([job.id]);
    expect(ids(await store.queryJobs({ workspace_id: ws, args: { order: 'o-0' }, limit: 10 }))).toEqual([job.id]);
    await store.scrubJob(job.id);
    expect(await store.queryJobs({ workspace_id: ws, args: { order: 'o-0' }, limit: 10 })).toEqual([]);
    expect(await store.queryJobs({ workspace_id: ws, result: { invoice: 'inv-9' }, limit: 10 })).toEqual([]);
    expect(store.db.prepare('SELECT count(*) AS n FROM job_fields WHERE job_id = ?').get(job.id)).toEqual({ n: 0 });
    expect(ids(await store.queryJobs({ workspace_id: ws, args: { order: 'o-1' }, limit: 10 }))).toEqual([jobs[1].id]);
  });

  it('indexes the jobs a data directory already held when it migrates', async () => {
    const file = join(dir, 'old.db');
    const db = new Database(file);
    const before = MIGRATIONS.findIndex((sql) => sql.trimStart().startsWith('-- argsidx:'));
    for (let v = 0; v < before; v++) db.exec(MIGRATIONS[v]);
    db.pragma(`user_version = ${before}`);
    const insert = db.prepare(
      `INSERT INTO jobs (id, workspace_id, kind, script_path, script_hash, language, args, result, status, created_by, created_at)
       VALUES (?, 'ws', 'script', 'f/a/s', 'h', 'python3', ?, ?, 'success', 'alice', ?)`,
    );
    insert.run('old-1', '{"customer":"acme","n":1}', '{"rows":3}', at(1));
    insert.run('old-2', '{"customer":"other"}', null, at(2));
    insert.run('old-3', '["not", "an", "object"]', 'not json', at(3));
    db.close();
    const migrated = new SqliteStore(file);
    try {
      expect(planJobQuery(migrated.db, { workspace_id: 'ws', args: { customer: 'acme' }, limit: 10 }).lookup).toBeTruthy();
      expect(ids(await migrated.queryJobs({ workspace_id: 'ws', args: { customer: 'acme' }, limit: 10 }))).toEqual(['old-1']);
      expect(ids(await migrated.queryJobs({ workspace_id: 'ws', result: { rows: 3 }, limit: 10 }))).toEqual(['old-1']);
      expect(migrated.db.prepare('SELECT count(*) AS n FROM job_fields').get()).toEqual({ n: 4 });
    } finally {
      migrated.close();
    }
  });
});
