/**
 * `npm run bench` (run list part): the console's run list on a local store of
 * 1,000,000 jobs. Seeds them with one prepared INSERT ... SELECT in one transaction (indexes built
 * after the load), then times filtered pages through the core's listRuns — the same call GET /jobs/runs makes, rights
 * check included — and prints the p50 and p95 of each filter. Nothing here is a pass/fail test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../functions/adapters/local/sqlite-store.js';
import { jobFieldsBackfill } from '../functions/adapters/local/sqlite-job-fields.js';
import { listRuns } from '../functions/core/console/runs.js';
import { runFilterSchema } from '../functions/core/console/run-filter.js';
import { Rights } from '../functions/core/identity/permissions.js';
import type { Principal } from '../functions/core/identity/auth.js';
import { measureQuietly, showLoad } from './load-guard.js';

const JOBS = Number(process.env.BENCH_RUN_LIST_JOBS ?? 1_000_000);
const SAMPLES = Number(process.env.BENCH_RUN_LIST_SAMPLES ?? 60);
const WS = 'bench';
const STATUSES = ['success', 'success', 'success', 'success', 'failed', 'canceled', 'queued', 'running'];
const START = Date.parse('2026-01-01T00:00:00Z');

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-runs-'));
const store = new SqliteStore(join(dir, 'svc.db'));
try {
  await store.createWorkspace({ id: WS, name: WS, created_at: new Date(START).toISOString(), object_storage_enabled: false });
  const seedStarted = performance.now();
  // A big page cache and in-memory sorting for the load and the index builds (this connection only).
  store.db.pragma('cache_size = -262144');
  store.db.pragma('temp_store = MEMORY');
  // Indexes are built once after the load rather than row by row: the same indexes, much sooner.
  // job_fields, the args/result index, is written from the loaded jobs (the store's insert writes
  // a job's rows itself; rows made inside SQLite would have none, and every args filter matched nothing).
  const indexes = store.db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('jobs', 'job_fields') AND sql IS NOT NULL").all() as { name: string; sql: string }[];
  for (const index of indexes) store.db.exec(`DROP INDEX ${index.name}`);
  // One INSERT ... SELECT over a counter: the rows are made inside SQLite, in one transaction.
  // One job every 3 s over about a month: 50 folders of 20 scripts, 40 users, one in ten "prod".
  store.db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < @jobs),
     j AS (SELECT i, strftime('%Y-%m-%dT%H:%M:%fZ', @start / 1000.0 + i * 3, 'unixepoch') AS at,
                  json_extract(@statuses, '$[' || (i % 8) || ']') AS status FROM n)
     INSERT INTO jobs (id, workspace_id, kind, script_path, script_hash, language, args, status, created_by, created_at, started_at, completed_at, success, result, logs)
     SELECT lower(hex(randomblob(16))), @ws, 'script', 'f/team' || (i % 50) || '/script' || (i % 1000), 'h', 'bash',
            json_object('env', CASE WHEN i % 10 = 0 THEN 'prod' ELSE 'dev' END, 'customer', 'c' || (i % 5000), 'n', i),
            status, 'user' || (i % 40), at, at,
            CASE WHEN status IN ('success', 'failed', 'canceled') THEN at END,
            CASE status WHEN 'success' THEN 1 WHEN 'failed' THEN 0 WHEN 'canceled' THEN 0 END,
            CASE WHEN status IN ('success', 'failed', 'canceled') THEN json_object('ok', json(CASE WHEN status = 'success' THEN 'true' ELSE 'false' END), 'rows', i % 100) END,
            ''
     FROM j`,
  ).run({ jobs: JOBS, start: START, ws: WS, statuses: JSON.stringify(STATUSES) });
  store.db.exec(jobFieldsBackfill());
  for (const index of indexes) store.db.exec(index.sql);
  store.db.exec('ANALYZE');
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  const principal: Principal = { username: 'admin', isSuperadmin: true, workspaceId: null, scopes: null, via: 'token', jobId: null, tokenHash: null };
  const rights = await Rights.load({ store }, principal, WS);
  const deps = { store, clock: { now: () => new Date() } };
  const end = START + JOBS * 3000;
  const someTime = (k: number) => new Date(START + ((k * 7919) % JOBS) * 3000).toISOString();

  const cases: [string, (k: number) => Record<string, unknown>][] = [
    ['newest page, no filter', () => ({})],
    ['status=failed', () => ({ status: 'failed' })],
    ['path prefix f/team7/', () => ({ path: 'f/team7/' })],
    ['exact script path', (k) => ({ path: `f/team${k % 50}/script${k % 1000}` })],
    ['user=user13', () => ({ user: 'user13' })],
    ['status + user + path prefix', () => ({ status: 'failed', user: 'user12', path: 'f/team12/' })],
    ['status + user + path prefix, no match', () => ({ status: 'success', user: 'user12', path: 'f/team12/' })],
    ['args {"env":"prod"}', () => ({ args: '{"env":"prod"}' })],
    ['args {"customer":"c42"} (rare: 200 of 1M)', () => ({ args: '{"customer":"c42"}' })],
    ['status=failed + args {"env":"prod"}', () => ({ status: 'failed', args: '{"env":"prod"}' })],
    ['args {"customer":"c99999"} (no match)', () => ({ args: '{"customer":"c99999"}' })],
    ['status=failed + args {"customer":"c42"} (none)', () => ({ status: 'failed', args: '{"customer":"c42"}' })],
    ['result {"rows":7}', () => ({ result: '{"rows":7}' })],
    ['time range (one day), status=success', (k) => ({ after: someTime(k), before: new Date(Math.min(end, Date.parse(someTime(k)) + 86_400_000)).toISOString(), status: 'success' })],
  ];

  console.log(`\nRun list: ${JOBS.toLocaleString('en')} jobs in SQLite, seeded in ${seedSeconds.toFixed(1)} s; pages of 50, ${SAMPLES} samples each\n`);
  console.log('filter'.padEnd(46) + 'p50 ms'.padStart(9) + 'p95 ms'.padStart(9) + '  rows  load (1-minute, start→end)');
  for (const [name, make] of cases) {
    const times: number[] = [];
    let rows = 0;
    const { load } = await measureQuietly(`the run list filter ${name}`, async () => {
      times.length = 0;
      for (let k = 0; k < SAMPLES; k++) {
        const filter = runFilterSchema.parse({ per_page: 50, ...make(k) });
        const t = performance.now();
        const first = await listRuns(deps, rights, filter);
        // Every other sample also reads the next page: cursor pages must be as quick as the first.
        const page = k % 2 && first.next_cursor ? await listRuns(deps, rights, { ...filter, cursor: first.next_cursor }) : first;
        times.push((performance.now() - t) / (page === first ? 1 : 2));
        rows = first.runs.length;
      }
    });
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1);
    console.log(name.padEnd(46) + at(0.5).padStart(9) + at(0.95).padStart(9) + `  ${String(rows).padEnd(4)}  ${showLoad(load)}`);
    // A filter the seed gives matches that found none timed an empty lookup, not the run list.
    if (rows === 0 && !/no match|\(none\)/.test(name)) throw new Error(`the run list filter ${name} found no runs in the seeded jobs`);
  }
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
