/**
 * `npm run bench`: sync webhook latency and throughput of the local service against a floor
 * measured in the same run (bench/floor-server.ts), for a trivial TypeScript and Python script.
 * Prints absolute figures and the ratios to the floor; nothing here is a pass/fail test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, request } from 'node:http';

const ROOT = resolve(import.meta.dirname, '..');
const TOKEN = 'bench-admin-token';
const LATENCY_REQUESTS = Number(process.env.BENCH_LATENCY_REQUESTS ?? 500);
const THROUGHPUT_SECONDS = Number(process.env.BENCH_THROUGHPUT_SECONDS ?? 5);
const CONCURRENCY = 16;

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function post(url: URL, body: string, headers: Record<string, string>): Promise<string> {
  return new Promise((done, fail) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? done(text) : fail(new Error(`${res.statusCode} ${text}`))));
    });
    req.on('error', fail);
    req.end(body);
  });
}

function startProcess(args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((ok, fail) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const match = out.match(ready);
      if (match) ok({ child, match });
    });
    child.once('exit', (code) => fail(new Error(`process exited with ${code}: ${out}`)));
  });
}

interface Figures {
  p50: number;
  p99: number;
  rps: number;
}

async function measure(url: URL, headers: Record<string, string>): Promise<Figures> {
  const body = '{"name":"bench"}';
  const expected = '"hello bench"';
  for (let i = 0; i < 50; i++) await post(url, body, headers); // warm processes and caches
  const latencies: number[] = [];
  for (let i = 0; i < LATENCY_REQUESTS; i++) {
    const t = performance.now();
    const text = await post(url, body, headers);
    latencies.push(performance.now() - t);
    if (text !== expected) throw new Error(`unexpected answer ${text}`);
  }
  latencies.sort((a, b) => a - b);
  let done = 0;
  const start = performance.now();
  const end = start + THROUGHPUT_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        await post(url, body, headers);
        done++;
      }
    }),
  );
  return {
    p50: latencies[Math.floor(latencies.length * 0.5)],
    p99: latencies[Math.floor(latencies.length * 0.99)],
    rps: done / ((performance.now() - start) / 1000),
  };
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const service = await startProcess([join(ROOT, 'bin/svc.js'), 'serve'], { PORT: '0', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TOKEN }, /svc listening on (\S+)/);
  const base = service.match[1];
  const auth = { authorization: `Bearer ${TOKEN}` };
  const scripts = {
    typescript: { language: 'bun', content: 'export function main(name: string = "world") { return "hello " + name; }' },
    python: { language: 'python3', content: 'def main(name: str = "world"):\n    return "hello " + name\n' },
  };
  const rows: Array<{ name: string; svc: Figures; floor: Figures }> = [];
  try {
    for (const [name, script] of Object.entries(scripts)) {
      const created = await fetch(`${base}/api/w/main/scripts/create`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ path: `u/admin/bench_${name}`, ...script }),
      });
      if (created.status !== 201) throw new Error(`create failed: ${await created.text()}`);
      const floorProc = await startProcess(['--import', 'tsx', join(ROOT, 'bench/floor-server.ts'), script.language === 'python3' ? 'python3' : 'node'], {}, /floor listening on (\S+)/);
      try {
        const floor = await measure(new URL(floorProc.match[1]), {});
        const svc = await measure(new URL(`${base}/api/w/main/jobs/run_wait_result/p/u/admin/bench_${name}`), auth);
        rows.push({ name, svc, floor });
      } finally {
        floorProc.child.kill();
      }
    }
  } finally {
    service.child.kill('SIGTERM');
    agent.destroy();
    await new Promise((r) => service.child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }

  const f = (n: number) => n.toFixed(2);
  console.log(`\nsync webhook, ${LATENCY_REQUESTS} sequential requests for latency, ${CONCURRENCY} clients for ${THROUGHPUT_SECONDS}s for throughput\n`);
  console.log('| script | svc p50 ms | svc p99 ms | svc runs/s | floor p50 ms | floor p99 ms | floor runs/s | p50 ratio | runs/s ratio |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const { name, svc, floor } of rows) {
    console.log(`| ${name} | ${f(svc.p50)} | ${f(svc.p99)} | ${svc.rps.toFixed(0)} | ${f(floor.p50)} | ${f(floor.p99)} | ${floor.rps.toFixed(0)} | ${(svc.p50 / floor.p50).toFixed(2)}x | ${(svc.rps / floor.rps).toFixed(2)}x |`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
