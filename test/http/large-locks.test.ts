import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, waitForJob, type TestServer } from './harness.js';
import { startFakeNpmRegistry, type FakeNpmRegistry, type FakePackage } from './fake-npm-registry.js';

/**
 * A script whose imports resolve to a large tree: npm's lock of it passes 64 KB (here 400
 * packages, ~100 KB). The local shell installs it as any other; on AWS the lock travels to the
 * dependency builder function, whose request was bounded at 64 KB (and a Lambda Event invoke
 * takes at most 256 KB): the build was refused without a word, and every run of the version
 * waited for a tree that never came, then failed.
 */
let s: TestServer;
let registry: FakeNpmRegistry;
let depsDir: string;
const ws = () => `/api/w/${s.workspace}`;
const WIDTH = 400;

beforeAll(async () => {
  const leaves: FakePackage[] = Array.from({ length: WIDTH }, (_, i) => ({ name: `svc-test-leaf-${i}`, version: '1.0.0', type: 'module', main: 'index.js', files: { 'index.js': `export const n = ${i};\n` } }));
  const wide: FakePackage = {
    name: 'svc-test-wide',
    version: '1.0.0',
    type: 'module',
    main: 'index.js',
    files: { 'index.js': 'import { n } from "svc-test-leaf-399";\nexport const last = n;\n' },
    dependencies: Object.fromEntries(leaves.map((l) => [l.name, '^1.0.0'])),
  };
  registry = await startFakeNpmRegistry([...leaves, wide]);
  depsDir = mkdtempSync(join(tmpdir(), 'svc-deps-test-'));
  s = await startServer({ env: { NPM_CONFIG_REGISTRY: registry.url, SVC_DEPS_DIR: depsDir, DEPS_BUILD_WAIT_SECONDS: '120' } });
}, 180_000);

afterAll(async () => {
  await s?.stop();
  await registry?.close();
  if (depsDir) rmSync(depsDir, { recursive: true, force: true });
});

describe('a lock past 64 KB', () => {
  it('is resolved, stored, built and installed: the script runs', async () => {
    const res = await s.post(`${ws()}/scripts/create`, { path: 'u/admin/wide', language: 'bun', content: "import { last } from 'svc-test-wide';\nexport function main() { return last; }\n" });
    expect(res.status, await res.clone().text()).toBe(201);
    const version = await (await s.fetch(`${ws()}/scripts/get/p/u/admin/wide`)).json();
    expect(version.lock.length).toBeGreaterThan(64 * 1024);
    const run = await s.post(`${ws()}/jobs/run/p/u/admin/wide`, {});
    expect(run.status).toBe(201);
    const job = await waitForJob(s, await run.text(), 170_000);
    expect(job, JSON.stringify(job.result)).toMatchObject({ status: 'success', result: WIDTH - 1 });
  }, 240_000);

  it('is taken back as given: a version created with the lock another one stored (what svc sync pull, then push, sends) runs', async () => {
    const stored = (await (await s.fetch(`${ws()}/scripts/get/p/u/admin/wide`)).json()).lock as string;
    const res = await s.post(`${ws()}/scripts/create`, { path: 'u/admin/wide_again', language: 'bun', lock: stored, content: "import { last } from 'svc-test-wide';\nexport function main() { return last + 1; }\n" });
    expect(res.status, (await res.clone().text()).slice(0, 300)).toBe(201);
    expect((await (await s.fetch(`${ws()}/scripts/get/p/u/admin/wide_again`)).json()).lock).toBe(stored);
    const run = await s.post(`${ws()}/jobs/run/p/u/admin/wide_again`, {});
    const job = await waitForJob(s, await run.text(), 170_000);
    expect(job, JSON.stringify(job.result)).toMatchObject({ status: 'success', result: WIDTH });
  }, 240_000);
});
