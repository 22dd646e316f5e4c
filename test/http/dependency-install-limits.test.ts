import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from './harness.js';
import { startFakeNpmRegistry, type FakeNpmRegistry } from './fake-npm-registry.js';
import { waitForJob } from './harness.js';

/**
 * Installs are held to the job's disk limit (SVC_JOB_DISK_MB, 8 MB here) as jobs are: a package
 * whose small tarball unpacks to far more (a gzip bomb by a hostile package author) fails to
 * install instead of filling the service's disk, where the tree cache and the data live.
 */
const aws = process.env.SVC_TEST_SHELL === 'aws';
let s: TestServer;
let registry: FakeNpmRegistry;
let depsDir: string;
const ws = () => `/api/w/${s.workspace}`;
const MB = 1024 * 1024;
/** 48 files of 1 MB of one letter: a tarball of a few hundred KB, 48 MB unpacked. */
const bomb = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`blob-${i}.txt`, 'x'.repeat(MB)]));

beforeAll(async () => {
  registry = await startFakeNpmRegistry([
    { name: 'svc-test-bomb', version: '1.0.0', type: 'module', main: 'index.js', files: { 'index.js': 'export const bomb = true;\n', ...bomb } },
    { name: 'svc-test-small', version: '1.0.0', type: 'module', main: 'index.js', files: { 'index.js': 'export const small = "fits";\n' } },
  ]);
  depsDir = mkdtempSync(join(tmpdir(), 'svc-deps-limits-'));
  s = await startServer({ env: { NPM_CONFIG_REGISTRY: registry.url, SVC_JOB_DISK_MB: '8', ...(aws ? { SANDBOX_DEPS_DIR: depsDir, DEPS_BUILD_DIR: join(depsDir, 'build') } : { SVC_DEPS_DIR: depsDir }) } });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await registry?.close();
  if (depsDir) rmSync(depsDir, { recursive: true, force: true });
});

describe('an install past the disk limit', () => {
  it('fails, naming the limit, and leaves nothing in the cache; a small one still installs', async () => {
    const create = (path: string, pkg: string, name: string) =>
      s.post(`${ws()}/scripts/create`, { path, language: 'bun', content: `import { ${name} } from '${pkg}';\nexport function main() { return ${name}; }\n` });
    expect((await create('u/admin/bomb', 'svc-test-bomb', 'bomb')).status).toBe(201);
    const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/bomb`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).text();
    const job = await waitForJob(s, id, 120_000);
    expect(job.status).toBe('failed');
    expect(job.result.error.name).toBe('DependencyInstallFailed');
    expect(job.result.error.message).toMatch(/disk/i);
    const trees = existsSync(join(depsDir, 'npm')) ? readdirSync(join(depsDir, 'npm')) : [];
    expect(trees).toEqual([]);

    expect((await create('u/admin/small', 'svc-test-small', 'small')).status).toBe(201);
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/u/admin/small`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(await res.json()).toBe('fits');
  });
});
