import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSync, startServer, type TestServer } from './harness.js';
import { startFakeNpmRegistry, type FakeNpmRegistry } from './fake-npm-registry.js';

/**
 * `npm:` imports of `deno` scripts (issue 31, item 3), as a user meets them over HTTP: resolved at
 * create from the instance's registry (a small one on loopback here) into a lock, installed once
 * into the shared read-only tree cache, and imported from there by warm Deno processes, so a run
 * never downloads and no job can change what another imports.
 */
let s: TestServer;
let registry: FakeNpmRegistry;
let depsDir: string;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const create = (path: string, content: string, extra: Record<string, unknown> = {}) => s.post(`${ws()}/scripts/create`, { path, language: 'deno', content, ...extra });
const esm = (name: string, version: string, files: Record<string, string>, extra: Record<string, unknown> = {}) => ({ name, version, type: 'module' as const, main: 'index.js', files, ...extra });

beforeAll(async () => {
  registry = await startFakeNpmRegistry([
    esm('svc-test-punct', '1.0.0', { 'index.js': 'export const bang = "!";\n' }),
    esm('svc-test-shout', '1.0.0', { 'index.js': 'import { bang } from "svc-test-punct";\nexport function shout(s) { return s.toUpperCase() + bang; }\n' }, { dependencies: { 'svc-test-punct': '^1.0.0' } }),
    esm('svc-test-ver', '1.0.0', { 'index.js': 'export const version = "1.0.0";\n' }),
    esm('svc-test-ver', '2.0.0', { 'index.js': 'export const version = "2.0.0";\n' }),
  ]);
  depsDir = mkdtempSync(join(tmpdir(), 'svc-deps-test-'));
  // Room for a cold Deno start on a loaded machine.
  s = await startServer({ env: { NPM_CONFIG_REGISTRY: registry.url, SVC_DEPS_DIR: depsDir, SVC_JOB_TIMEOUT_SECONDS: '60' } });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await registry?.close();
  if (depsDir) rmSync(depsDir, { recursive: true, force: true });
});

describe('npm: packages in deno scripts', () => {
  it('are locked at create and imported from the cache: a second run, and a new version with the same lock, never reach the registry', async () => {
    const content = `import { shout } from 'npm:svc-test-shout@1';\nexport function main(name: string) { return { shout: shout(name), deno: typeof Deno.version.deno }; }\n`;
    expect((await create('u/admin/deno_shout', content)).status).toBe(201);
    const version = await (await s.fetch(`${ws()}/scripts/get/p/u/admin/deno_shout`)).json();
    const lock = JSON.parse(version.lock);
    expect(lock.packages['node_modules/svc-test-shout'].version).toBe('1.0.0');
    expect(lock.packages['node_modules/svc-test-punct'].integrity).toMatch(/^sha512-/);

    // The first run may wait for the install; after it the registry hears nothing more.
    expect(await runSync(s, 'u/admin/deno_shout', { name: 'hi' })).toEqual({ status: 200, body: { shout: 'HI!', deno: 'string' } });
    const heard = registry.requests.length;
    expect(await runSync(s, 'u/admin/deno_shout', { name: 'again' })).toEqual({ status: 200, body: { shout: 'AGAIN!', deno: 'string' } });
    // Another script given that lock: nothing to resolve, the tree is there, a fresh Deno process imports it.
    expect((await create('u/admin/deno_shout_locked', content, { lock: version.lock })).status).toBe(201);
    expect((await runSync(s, 'u/admin/deno_shout_locked', { name: 'locked' })).body.shout).toBe('LOCKED!');
    expect(registry.requests.slice(heard)).toEqual([]);
  });

  it('runs the version the pin names, and the version a given lock names', async () => {
    expect((await create('u/admin/deno_ver_pinned', `import { version } from 'npm:svc-test-ver@1.0.0';\nexport function main() { return version; }\n`)).status).toBe(201);
    expect((await runSync(s, 'u/admin/deno_ver_pinned')).body).toBe('1.0.0');
    const older = (await (await s.fetch(`${ws()}/scripts/get/p/u/admin/deno_ver_pinned`)).json()).lock as string;
    expect((await create('u/admin/deno_ver_locked', `import { version } from 'npm:svc-test-ver';\nexport function main() { return version; }\n`, { lock: older })).status).toBe(201);
    expect((await runSync(s, 'u/admin/deno_ver_locked')).body).toBe('1.0.0');
  });

  it('a job cannot write into the cache', async () => {
    const content = `import { shout } from 'npm:svc-test-shout@1';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
export async function main() {
  const file = Deno.realPathSync(fileURLToPath(import.meta.resolve('npm:svc-test-shout@1')));
  const attempts: Record<string, string> = {};
  const attempt = async (name: string, write: () => unknown) => { try { await write(); attempts[name] = 'wrote'; } catch (e) { attempts[name] = (e as Error).name; } };
  await attempt('deno', () => Deno.writeTextFile(file, 'export const shout = () => "owned";'));
  await attempt('node', () => writeFileSync(file, 'export const shout = () => "owned";'));
  await attempt('new file', () => Deno.writeTextFile(file + '.new', 'x'));
  await attempt('remove', () => Deno.remove(file));
  return { attempts, real: file, before: shout('x') };
}
`;
    expect((await create('u/admin/deno_tamper', content)).status).toBe(201);
    const run = await runSync(s, 'u/admin/deno_tamper');
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    // The installed file is the cache's, not a copy in the job's directory.
    expect(run.body.real.startsWith(depsDir) || process.env.SVC_TEST_SHELL === 'aws').toBe(true);
    expect(Object.keys(run.body.attempts)).toHaveLength(4);
    for (const outcome of Object.values(run.body.attempts)) expect(outcome).not.toBe('wrote');
    expect(run.body.before).toBe('X!');
    // Another version importing the package still gets it as installed.
    expect((await create('u/admin/deno_after_tamper', `import { shout } from 'npm:svc-test-shout@1';\nexport function main() { return shout('ok'); }\n`)).status).toBe(201);
    expect((await runSync(s, 'u/admin/deno_after_tamper')).body).toBe('OK!');
  });

  it('refuses an npm: package the registry does not have, naming it, and stores nothing', async () => {
    const missing = await create('u/admin/deno_missing', `import x from 'npm:svc-test-missing@1';\nexport function main() { return x; }\n`);
    expect(missing.status).toBe(400);
    expect((await missing.json()).error.message).toContain('svc-test-missing');
    expect((await s.fetch(`${ws()}/scripts/get/p/u/admin/deno_missing`)).status).toBe(404);
  });
});
