import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from './harness.js';
import { startFakeNpmRegistry, type FakeNpmRegistry } from './fake-npm-registry.js';

/**
 * The installed dependency trees take bounded room (issue 31 item 6): over the bound, the least
 * recently used trees go first, and a version whose tree went installs (locally) or fetches (the
 * AWS sandbox) it again at its next run. Local shell: SVC_DEPS_CACHE_MB over SVC_DEPS_DIR; AWS
 * sandbox: SANDBOX_DEPS_CACHE_MB over the trees it fetched (SANDBOX_DEPS_DIR). Both 1 MB here.
 */
const aws = process.env.SVC_TEST_SHELL === 'aws';
const MB = 1024 * 1024;
let s: TestServer;
let registry: FakeNpmRegistry;
let depsDir: string;
const ws = () => `/api/w/${s.workspace}`;
/** A package of ~600 KB installed: two of them do not fit in 1 MB. */
const big = (name: string) => ({ name, version: '1.0.0', type: 'module' as const, main: 'index.js', files: { 'index.js': `export const name = ${JSON.stringify(name)};\n// ${'x'.repeat(600_000)}\n` } });
const script = (pkg: string) => `import { name } from '${pkg}';\nexport function main() { return name; }\n`;
const run = async (path: string) => {
  const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  return { status: res.status, body: await res.json() };
};
/** The trees in the cache, by the package each holds. */
const cached = () => {
  const root = join(depsDir, 'npm');
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((key) => readdirSync(join(root, key, 'node_modules')).filter((n) => n.startsWith('svc-test-')));
};
const bytes = (path: string): number => (statSync(path).isDirectory() ? readdirSync(path).reduce((sum, name) => sum + bytes(join(path, name)), 0) : statSync(path).size);

beforeAll(async () => {
  registry = await startFakeNpmRegistry([big('svc-test-big-a'), big('svc-test-big-b')]);
  depsDir = mkdtempSync(join(tmpdir(), 'svc-deps-cache-test-'));
  s = await startServer({
    env: { NPM_CONFIG_REGISTRY: registry.url, SVC_DEPS_CACHE_MB: '1', ...(aws ? { SANDBOX_DEPS_DIR: depsDir, SANDBOX_DEPS_CACHE_MB: '1' } : { SVC_DEPS_DIR: depsDir }) },
  });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await registry?.close();
  if (depsDir) rmSync(depsDir, { recursive: true, force: true });
});

describe('the dependency cache', () => {
  it('stays within its bound, least recently used trees first, and a version whose tree went runs again', async () => {
    const create = async (name: string) => expect((await s.post(`${ws()}/scripts/create`, { path: `u/admin/big_${name}`, language: 'bun', content: script(`svc-test-big-${name}`) })).status).toBe(201);
    // One after the other: a create installs its tree in the background, which counts as a use.
    await create('a');
    expect(await run('u/admin/big_a')).toEqual({ status: 200, body: 'svc-test-big-a' });
    expect(cached()).toEqual(['svc-test-big-a']);
    await create('b');
    expect(await run('u/admin/big_b')).toEqual({ status: 200, body: 'svc-test-big-b' });
    // a is the least recently used: it went to make room for b.
    expect(cached()).toEqual(['svc-test-big-b']);
    expect(bytes(join(depsDir, 'npm'))).toBeLessThanOrEqual(1 * MB);
    // The next run of a gets its tree back (and b goes in turn).
    expect(await run('u/admin/big_a')).toEqual({ status: 200, body: 'svc-test-big-a' });
    expect(cached()).toEqual(['svc-test-big-a']);
  });
});
