/**
 * Start-to-listening and start-to-first-run, on an empty data directory each time. Listening is
 * measured from spawning `node bin/svc.js serve` until its port accepts a TCP connection (the port
 * is chosen beforehand and probed every millisecond), so nothing the service prints is waited for.
 * The first run adds what a new user does next: create a script and call its sync webhook, the
 * first job's process included.
 *
 *   npm run bench:start                                  # this checkout, `node bin/svc.js serve`
 *   npm run bench:start -- /path/to/other/checkout ...   # each checkout in turn, same run
 */
import { spawn } from 'node:child_process';
import { connect, createServer, type AddressInfo } from 'node:net';
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
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [join(checkout, 'bin/svc.js'), 'serve'], {
    cwd: checkout,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, PORT: String(port), SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TOKEN },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    await accepting(port, () => exited);
    const listeningMs = performance.now() - started;
    const url = `http://127.0.0.1:${port}`;
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

/** A port nothing listens on now: bound by the kernel's choice, then let go for the service. */
function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePromise(port));
    });
  });
}

/** Resolves once a TCP connection to 127.0.0.1:`port` is accepted, trying again every millisecond. */
async function accepting(port: number, gone: () => boolean): Promise<void> {
  for (;;) {
    const accepted = await new Promise<boolean>((done) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        done(true);
      });
      socket.once('error', () => done(false));
    });
    if (accepted) return;
    if (gone()) throw new Error('the service exited before listening');
    await new Promise((r) => setTimeout(r, 1));
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const checkouts = process.argv.slice(2).length > 0 ? process.argv.slice(2).map((c) => resolve(c)) : [process.cwd()];
console.log(`start: spawn to the port accepting, and to the first sync run answered; ${RUNS} cold starts per checkout, median (min-max)\n`);
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
