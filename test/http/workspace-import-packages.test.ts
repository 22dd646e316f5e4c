import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSync, startServer, type TestServer } from './harness.js';
import { startFakeNpmRegistry, type FakeNpmRegistry } from './fake-npm-registry.js';
import { startFakePypiIndex, type FakePypiIndex } from './fake-pypi-index.js';

/**
 * A workspace script imported by another brings its packages along (docs/workspace-imports.md):
 * the importer's lock covers what the helper imports, so its job finds them installed (in the AWS
 * shell, from the tree the dependency builder made).
 */
let s: TestServer;
let registry: FakeNpmRegistry;
let index: FakePypiIndex;
let depsDir: string;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const create = (path: string, language: string, content: string) => s.post(`${ws()}/scripts/create`, { path, language, content });
const lockOf = async (path: string) => ((await (await s.fetch(`${ws()}/scripts/get/p/${path}`)).json()) as { lock: string }).lock;

beforeAll(async () => {
  registry = await startFakeNpmRegistry([
    { name: 'svc-test-ver', version: '1.0.0', type: 'module', main: 'index.js', files: { 'index.js': 'export const version = "1.0.0";\n' } },
    { name: 'svc-test-ver', version: '2.0.0', type: 'module', main: 'index.js', files: { 'index.js': 'export const version = "2.0.0";\n' } },
  ]);
  index = await startFakePypiIndex([
    { name: 'PyYAML', version: '5.0.0', files: { 'yaml/__init__.py': '__version__ = "5.0.0"\n' } },
    { name: 'PyYAML', version: '6.0.0', files: { 'yaml/__init__.py': '__version__ = "6.0.0"\n' } },
  ]);
  depsDir = mkdtempSync(join(tmpdir(), 'svc-deps-test-'));
  s = await startServer({ env: { NPM_CONFIG_REGISTRY: registry.url, PIP_INDEX_URL: index.url, SVC_DEPS_DIR: depsDir } });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await registry?.close();
  await index?.close();
  if (depsDir) rmSync(depsDir, { recursive: true, force: true });
});

describe('packages of imported workspace scripts', () => {
  it('TypeScript: the helper pins a package version, the importer imports none itself', async () => {
    expect((await create('u/admin/ver_helper', 'bun', 'import { version } from "svc-test-ver@1.0.0";\nexport const helperVersion = () => version;\nexport function main() { return version; }\n')).status).toBe(201);
    expect((await create('u/admin/ver_importer', 'bun', 'import { helperVersion } from "./ver_helper.ts";\nexport function main() { return helperVersion(); }\n')).status).toBe(201);
    const lock = await lockOf('u/admin/ver_importer');
    expect(lock).toMatch(/^# workspace-import u\/admin\/ver_helper [0-9a-f]+\n/);
    expect(JSON.parse(lock.slice(lock.indexOf('\n') + 1)).packages['node_modules/svc-test-ver'].version).toBe('1.0.0');
    expect(await runSync(s, 'u/admin/ver_importer')).toEqual({ status: 200, body: '1.0.0' });
  });

  it('Python: the helper pins a distribution in its # requirements: block', async () => {
    expect((await create('u/admin/yaml_helper', 'python3', '# requirements:\n# PyYAML==5.0.0\n\nimport yaml\n\ndef yaml_version():\n    return yaml.__version__\n\ndef main():\n    return yaml_version()\n')).status).toBe(201);
    expect((await create('u/admin/yaml_importer', 'python3', 'from u.admin.yaml_helper import yaml_version\n\ndef main():\n    return yaml_version()\n')).status).toBe(201);
    const lock = await lockOf('u/admin/yaml_importer');
    expect(lock).toMatch(/^# workspace-import u\/admin\/yaml_helper [0-9a-f]+\nPyYAML==5\.0\.0 --hash=sha256:/);
    expect(await runSync(s, 'u/admin/yaml_importer')).toEqual({ status: 200, body: '5.0.0' });
  });
});
