/**
 * Part of `npm run bench`: the warm sync-webhook p50 of a `bun` script
 * that imports an npm package next to the same script without the import, the first run of a new
 * version whose lock is already installed next to a warm run, and a warm `deno` script with the
 * same package as an `npm:` import next to the warm `bun` one. Packages come from the fake npm
 * registry the tests use, on loopback. Printed, never asserted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startFakeNpmRegistry } from '../test/http/fake-npm-registry.js';
import { exitOnBenchError, measureQuietly, showLoad } from './load-guard.js';

const ROOT = resolve(import.meta.dirname, '..');
const TOKEN = 'bench-admin-token';
const REQUESTS = Number(process.env.BENCH_LATENCY_REQUESTS ?? 500);
const NEW_VERSIONS = 9;

const PLAIN = 'export function main(name: string = "world") { return "hello " + name; }\n';
const IMPORTING = 'import { greet } from "svc-bench-greet";\nexport function main(name: string = "world") { return greet(name); }\n';
const DENO_IMPORTING = 'import { greet } from "npm:svc-bench-greet@1";\nexport function main(name: string = "world") { return greet(name); }\n';

async function main() {
  const registry = await startFakeNpmRegistry([
    { name: 'svc-bench-greet', version: '1.0.0', type: 'module', main: 'index.js', files: { 'index.js': 'export const greet = (name) => "hello " + name;\n' } },
  ]);
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-deps-'));
  const depsDir = mkdtempSync(join(tmpdir(), 'svc-bench-deps-cache-'));
  const service = await startService({ PORT: '0', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TOKEN, NPM_CONFIG_REGISTRY: registry.url, SVC_DEPS_DIR: depsDir });
  const api = (path: string, body: unknown) => fetch(`${service.url}/api/w/main${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const run = async (path: string) => {
    const t = performance.now();
    const res = await api(`/jobs/run_wait_result/p/${path}`, { name: 'bench' });
    const text = await res.text();
    if (res.status !== 200 || text !== '"hello bench"') throw new Error(`${path}: ${res.status} ${text}`);
    return performance.now() - t;
  };
  const create = async (path: string, content: string, parent: string | null, language = 'bun') => {
    const res = await api('/scripts/create', { path, language, content, parent_hash: parent });
    if (res.status !== 201) throw new Error(`create ${path}: ${res.status} ${await res.text()}`);
    return res.text();
  };
  try {
    await create('u/admin/plain', PLAIN, null);
    let hash = await create('u/admin/importing', IMPORTING, null);
    await create('u/admin/deno_importing', DENO_IMPORTING, null, 'deno');
    const warm: Record<string, number[]> = { plain: [], importing: [], deno_importing: [] };
    const names = ['plain', 'importing', 'deno_importing'] as const;
    for (const name of names) await run(`u/admin/${name}`); // the first run: the install (importing) and a process start
    const warmLoad = await measureQuietly('the warm runs of scripts with and without packages', async () => {
      for (const name of names) warm[name] = [];
      // Interleaved, so a change of the machine's load weighs on every script alike.
      for (let i = 0; i < REQUESTS; i++) for (const name of names) warm[name].push(await run(`u/admin/${name}`));
    });
    // New versions of the importing script, same lock: the tree is installed, a spare may be ready.
    const first: number[] = [];
    const firstLoad = await measureQuietly('the first runs of new versions', async () => {
      first.length = 0;
      for (let i = 0; i < NEW_VERSIONS; i++) {
        hash = await create('u/admin/importing', `${IMPORTING}// version ${i}\n`, hash);
        await new Promise((r) => setTimeout(r, 400)); // as between a push and its first caller: the spare's start
        first.push(await run('u/admin/importing'));
      }
    });
    const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const f = (n: number) => n.toFixed(2);
    console.log(`\nscripts with npm packages, ${REQUESTS} sequential sync requests each; 1-minute load start→end: ${showLoad(warmLoad.load)} (warm runs), ${showLoad(firstLoad.load)} (new versions)\n`);
    const ratio = (a: number[], b: number[]) => `${(p50(a) / p50(b)).toFixed(2)}x`;
    console.log('| measure | ratio | ms | target |');
    console.log('|---|---|---|---|');
    console.log(`| warm p50 without the import | | ${f(p50(warm.plain))} | |`);
    console.log(`| warm p50 with the import | ${ratio(warm.importing, warm.plain)} the one without | ${f(p50(warm.importing))} | at most 1.2x |`);
    console.log(`| first run of a new version, lock installed (median of ${NEW_VERSIONS}) | +${f(p50(first) - p50(warm.importing))} ms over warm | ${f(p50(first))} | at most +50 ms |`);
    console.log(`| warm p50 of a deno script with the npm: import | ${ratio(warm.deno_importing, warm.importing)} the bun one | ${f(p50(warm.deno_importing))} | at most 3x |`);
  } finally {
    service.child.kill('SIGTERM');
    await new Promise((r) => service.child.once('exit', r));
    await registry.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(depsDir, { recursive: true, force: true });
  }
}

function startService(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/svc.js'), 'serve'], { cwd: ROOT, env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((ok, fail) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const match = /svc listening on (\S+)/.exec(out);
      if (match) ok({ child, url: match[1] });
    });
    child.once('exit', (code) => fail(new Error(`svc exited with ${code}: ${out}`)));
  });
}

await main().catch(exitOnBenchError);
