/**
 * How a service just started warms up: the p50 of each window of sequential sync webhook calls of
 * a trivial script, from its first call on, for BENCH_WARM_UP_SECONDS (20). V8 optimizes the
 * request path only after thousands of calls, which is why `npm run bench` calls each service for
 * BENCH_WARM_MS before it measures it.
 *
 *   npm run build && npx tsx bench/warm-up.ts            # TypeScript
 *   npm run build && npx tsx bench/warm-up.ts python3    # Python
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { listeningAddress } from './flows.js';

const ROOT = resolve(import.meta.dirname, '..');
const TOKEN = 'bench-warm-up-admin-token';
const SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 20);
const WINDOW = 500;
const language = process.argv[2] === 'python3' ? 'python3' : 'bun';
const CONTENT = language === 'bun' ? 'export function main(name: string = "world") { return "hello " + name; }' : 'def main(name: str = "world"):\n    return "hello " + name\n';

function post(agent: Agent, url: URL): Promise<void> {
  return new Promise((done, fail) => {
    const req = request(url, { method: 'POST', agent, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? done() : fail(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', fail);
    req.end('{"name":"bench"}');
  });
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-warm-up-'));
  const service = spawn(process.execPath, [join(ROOT, 'bin/svc.js'), 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, PORT: '0', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const base = await listeningAddress(service);
    const created = await fetch(`${base}/api/w/main/scripts/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path: 'u/admin/hello', language, content: CONTENT }),
    });
    if (created.status !== 201) throw new Error(`create failed: ${await created.text()}`);
    const url = new URL(`${base}/api/w/main/jobs/run_wait_result/p/u/admin/hello`);
    console.log(`${language}: p50 of each window of ${WINDOW} sequential sync calls after start\n\n| calls | seconds since the first call | p50 ms |\n|---|---|---|`);
    const start = performance.now();
    let calls = 0;
    while (performance.now() - start < SECONDS * 1000) {
      const window: number[] = [];
      for (let i = 0; i < WINDOW; i++) {
        const t = performance.now();
        await post(agent, url);
        window.push(performance.now() - t);
      }
      calls += WINDOW;
      window.sort((a, b) => a - b);
      console.log(`| ${calls} | ${((performance.now() - start) / 1000).toFixed(1)} | ${window[WINDOW / 2]!.toFixed(2)} |`);
    }
  } finally {
    agent.destroy();
    service.kill('SIGTERM');
    await new Promise((r) => service.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
