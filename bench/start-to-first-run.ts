/**
 * Start-to-first-run: from spawning the service until its first sync webhook has answered, on an
 * empty data directory each time (script created in between, as a new user would). Measures what
 * a cold start costs: loading the service, opening SQLite, the first job's process.
 *
 *   npm run bench:start                                  # this checkout, `node bin/svc.js serve`
 *   npm run bench:start -- /path/to/other/checkout ...   # each checkout in turn, same run
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const RUNS = Number(process.env.RUNS ?? 5);
const TOKEN = 'svc_bench_start_token_0123456789';

interface Sample {
  listeningMs: number;
  firstRunMs: number;
}

async function once(checkout: string): Promise<Sample> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-start-'));
  const started = performance.now();
  const child = spawn(process.execPath, [join(checkout, 'bin/svc.js'), 'serve'], {
    cwd: checkout,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, PORT: '0', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = await listeningUrl(child);
    const listeningMs = performance.now() - started;
    const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
    const created = await fetch(`${url}/api/w/main/scripts/create`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ path: 'u/admin/hello', language: 'bun', content: 'export function main(name: string) { return `hello ${name}`; }' }),
    });
    if (created.status !== 201) throw new Error(`script create answered ${created.status}: ${await created.text()}`);
    const run = await fetch(`${url}/api/w/main/jobs/run_wait_result/p/u/admin/hello`, { method: 'POST', headers, body: '{"name":"Ada"}' });
    const body = await run.text();
    if (body !== '"hello Ada"') throw new Error(`the first run answered ${run.status}: ${body}`);
    return { listeningMs, firstRunMs: performance.now() - started };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /svc listening on (\S+)/.exec(out);
      if (match) resolvePromise(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`the service exited with ${code} before listening:\n${out}`)));
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const checkouts = process.argv.slice(2).length > 0 ? process.argv.slice(2).map((c) => resolve(c)) : [process.cwd()];
console.log(`start-to-first-run, ${RUNS} cold starts per checkout, median (min-max)\n`);
console.log('| checkout | listening | first sync run answered |');
console.log('|---|---|---|');
for (const checkout of checkouts) {
  const samples: Sample[] = [];
  for (let i = 0; i < RUNS; i++) samples.push(await once(checkout));
  const show = (pick: (s: Sample) => number) => {
    const values = samples.map(pick);
    return `${median(values).toFixed(0)} ms (${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)})`;
  };
  console.log(`| ${checkout} | ${show((s) => s.listeningMs)} | ${show((s) => s.firstRunMs)} |`);
}
