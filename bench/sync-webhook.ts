/**
 * `npm run bench`: sync webhook latency and throughput of the local service against a floor
 * measured in the same run (bench/floor-server.ts), for a trivial TypeScript, Python, Go, Deno and
 * Bash script (Go's, Deno's and Bash's floor is the Node one: a warm process answering), and flows of 1, 10 and
 * 40 light steps. Every measurement is load-guarded (bench/load-guard.ts). Prints the ratios to the
 * floor first, the absolute figures second, and ends with the targets, met or
 * not (bench/sync-report.ts); nothing here is a pass/fail test. BENCH_SCRIPTS=typescript,go
 * measures only those scripts and no flows (a short run).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, request } from 'node:http';
import { createFlow, FLOW_LANGUAGES, FLOW_RUNS, timeFlow, warmService } from './flows.js';
import { exitOnBenchError, measureQuietly } from './load-guard.js';
import { reportLines, type Figures, type FlowRow, type ScriptRow } from './sync-report.js';

const ROOT = resolve(import.meta.dirname, '..');
const TOKEN = 'bench-admin-token';
const LATENCY_REQUESTS = Number(process.env.BENCH_LATENCY_REQUESTS ?? 500);
const THROUGHPUT_SECONDS = Number(process.env.BENCH_THROUGHPUT_SECONDS ?? 5);
const CONCURRENCY = 16;
/** How long each service and floor is called before it is measured (see measureWith). */
const WARM_MS = Number(process.env.BENCH_WARM_MS ?? 10_000);
const SCRIPTS = {
  typescript: { language: 'bun', content: 'export function main(name: string = "world") { return "hello " + name; }' },
  python: { language: 'python3', content: 'def main(name: str = "world"):\n    return "hello " + name\n' },
  // Built at create; runs are served by a warm process of the binary, as for the other languages.
  go: { language: 'go', content: 'package inner\n\nfunc main(name string) (string, error) {\n\tif name == "" {\n\t\tname = "world"\n\t}\n\treturn "hello " + name, nil\n}\n' },
  deno: { language: 'deno', content: 'export function main(name: string = "world") { return "hello " + name; }' },
  // A process per job, started ahead of it from a confined spare; its last stdout line is the result.
  bash: { language: 'bash', content: 'name="$1"\necho "\\"hello $name\\""\n' },
};
/** Which script rows to measure; when set, the flows are skipped. */
const ONLY_SCRIPTS = process.env.BENCH_SCRIPTS?.split(',').map((name) => name.trim());

/**
 * Each measurement has its own keep-alive agent, destroyed at its end: a socket left idle while
 * another server is measured would be closed by its server's keep-alive timeout (5 s) just as the
 * next measurement reuses it (ECONNRESET).
 */
function post(agent: Agent, url: URL, body: string, headers: Record<string, string>): Promise<string> {
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

/** SVC_WARM_* settings reach the service, so runs with and without spares compare on one machine. */
function warmSettings(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith('SVC_WARM_') && e[1] !== undefined));
}

async function measure(url: URL, headers: Record<string, string>): Promise<Figures> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    return await measureWith(agent, url, headers);
  } finally {
    agent.destroy();
  }
}

async function measureWith(agent: Agent, url: URL, headers: Record<string, string>): Promise<Figures> {
  const body = '{"name":"bench"}';
  const expected = '"hello bench"';
  // Measures the server as it runs once started, not while it starts: the warm-up outlasts the spare
  // that replaces the one the first run took (started in the background, ~0.1-0.3 s of CPU), and V8
  // optimizing the service's request path, which takes thousands of calls: the p50 of the first
  // 500 calls after start is about twice the p50 it settles at (bench/warm-up.ts).
  const warmUntil = performance.now() + WARM_MS;
  for (let i = 0; i < 50 || performance.now() < warmUntil; i++) await post(agent, url, body, headers);
  const latencies: number[] = [];
  for (let i = 0; i < LATENCY_REQUESTS; i++) {
    const t = performance.now();
    const text = await post(agent, url, body, headers);
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
        await post(agent, url, body, headers);
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
  const service = await startProcess([join(ROOT, 'bin/svc.js'), 'serve'], { ...warmSettings(), PORT: '0', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TOKEN }, /svc listening on (\S+)/);
  const base = service.match[1];
  const auth = { authorization: `Bearer ${TOKEN}` };
  const rows: ScriptRow[] = [];
  const flowRows: FlowRow[] = [];
  try {
    if (!ONLY_SCRIPTS) await warmService(base, auth);
    for (const language of ONLY_SCRIPTS ? [] : FLOW_LANGUAGES) {
      for (const steps of [1, 10, 40]) {
        const path = await createFlow(base, auth, language, steps);
        const { value, load } = await measureQuietly(`the flow of ${steps} ${language} steps`, () => timeFlow(base, auth, path, language, steps));
        flowRows.push({ ...value, load });
      }
    }
    for (const [name, script] of Object.entries(SCRIPTS).filter(([name]) => !ONLY_SCRIPTS || ONLY_SCRIPTS.includes(name))) {
      const created = await fetch(`${base}/api/w/main/scripts/create`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ path: `u/admin/bench_${name}`, ...script }),
      });
      if (created.status !== 201) throw new Error(`create failed: ${await created.text()}`);
      const floorProc = await startProcess(['--import', 'tsx', join(ROOT, 'bench/floor-server.ts'), script.language === 'python3' ? 'python3' : 'node'], {}, /floor listening on (\S+)/);
      try {
        const floor = await measureQuietly(`the floor of ${name}`, () => measure(new URL(floorProc.match[1]), {}));
        const svc = await measureQuietly(`svc's ${name} script`, () => measure(new URL(`${base}/api/w/main/jobs/run_wait_result/p/u/admin/bench_${name}`), auth));
        rows.push({ name, svc: svc.value, floor: floor.value, svcLoad: svc.load, floorLoad: floor.load });
      } finally {
        floorProc.child.kill();
      }
    }
  } finally {
    service.child.kill('SIGTERM');
    await new Promise((r) => service.child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`\nsync webhook, ${LATENCY_REQUESTS} sequential requests for latency, ${CONCURRENCY} clients for ${THROUGHPUT_SECONDS}s for throughput`);
  for (const line of reportLines(rows, flowRows, { concurrency: CONCURRENCY, flowRuns: FLOW_RUNS })) console.log(line);
}

main().catch(exitOnBenchError);
