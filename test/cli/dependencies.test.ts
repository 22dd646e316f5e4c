import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from '../http/harness.js';
import { startFakeNpmRegistry, type FakeNpmRegistry } from '../http/fake-npm-registry.js';
import { apiGet, changesOf, newProject, newWorkspace, target } from './cli-harness.js';

/**
 * Locks through the real CLI (issue 31): `svc script generate-metadata` writes the lock the server
 * resolves beside the script, `locksRequired` refuses a push until it is there, the push installs
 * exactly it, a second push changes nothing, and a pull writes it back.
 */
let s: TestServer;
let registry: FakeNpmRegistry;
let depsDir: string;

beforeAll(async () => {
  registry = await startFakeNpmRegistry([
    { name: 'svc-test-ver', version: '1.0.0', type: 'module', main: 'index.js', files: { 'index.js': 'export const version = "1.0.0";\n' } },
    { name: 'svc-test-ver', version: '2.0.0', type: 'module', main: 'index.js', files: { 'index.js': 'export const version = "2.0.0";\n' } },
  ]);
  depsDir = mkdtempSync(join(tmpdir(), 'svc-deps-cli-'));
  s = await startServer({ env: { NPM_CONFIG_REGISTRY: registry.url, SVC_DEPS_DIR: depsDir } });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await registry?.close();
  if (depsDir) rmSync(depsDir, { recursive: true, force: true });
});

describe('svc script generate-metadata and locksRequired', () => {
  it('writes the lock, which the push then installs exactly; pushes twice without a change; pulls it back', async () => {
    const ws = await newWorkspace(s, 'deps');
    const script = `import { version } from 'svc-test-ver';\nexport function main(greeting: string) { return greeting + ' ' + version; }\n`;
    const project = newProject({ 'svc.yaml': 'defaultTs: bun\nlocksRequired: true\n', 'f/ops/ver.ts': script });

    const refused = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('f/ops/ver');

    const generated = await project.svc(['script', 'generate-metadata', 'f/ops/ver.ts', '--json-output', ...target(s, ws)]);
    expect(generated.code, generated.stderr).toBe(0);
    const report = JSON.parse(generated.stdout);
    expect(report).toMatchObject([{ path: 'f/ops/ver', lock_file: 'f/ops/ver.script.lock', schema: { properties: { greeting: { type: 'string' } } } }]);
    const lock = JSON.parse(project.read('f/ops/ver.script.lock'));
    expect(lock.packages['node_modules/svc-test-ver'].version).toBe('2.0.0');

    // Pinned to the older version by hand: the push installs exactly that.
    lock.packages['node_modules/svc-test-ver'] = JSON.parse((await olderLock()).split('\n').join('')).packages['node_modules/svc-test-ver'];
    project.write('f/ops/ver.script.lock', JSON.stringify(lock, null, 2));
    const pushed = await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(changesOf(pushed)).toEqual(['+ script f/ops/ver']);
    const run = await project.svc(['script', 'run', 'f/ops/ver', '-d', '{"greeting": "v"}', ...target(s, ws)]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('v 1.0.0');

    const again = await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]);
    expect(changesOf(again)).toEqual([]);
    const other = newProject({ 'svc.yaml': 'defaultTs: bun\n' });
    expect((await other.svc(['sync', 'pull', '--yes', ...target(s, ws)])).code).toBe(0);
    expect(other.read('f/ops/ver.script.lock')).toBe(project.read('f/ops/ver.script.lock'));
    expect((await apiGet(s, ws, '/scripts/get/p/f/ops/ver')).body.lock).toBe(project.read('f/ops/ver.script.lock'));
  });

  it('a script pushed without a lock gets one from the server: the next push changes nothing, a pull writes it', async () => {
    const ws = await newWorkspace(s, 'deps');
    const project = newProject({ 'svc.yaml': 'defaultTs: bun\n', 'f/ops/latest.ts': `import { version } from 'svc-test-ver';\nexport function main() { return version; }\n` });
    expect(changesOf(await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]))).toEqual(['+ script f/ops/latest']);
    expect(changesOf(await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]))).toEqual([]);
    expect((await project.svc(['sync', 'pull', '--yes', ...target(s, ws)])).code).toBe(0);
    expect(JSON.parse(project.read('f/ops/latest.script.lock')).packages['node_modules/svc-test-ver'].version).toBe('2.0.0');
  });
});

/** The lock of a script pinning svc-test-ver@1.0.0, as the server resolves it. */
async function olderLock(): Promise<string> {
  const res = await s.post(`/api/w/${s.workspace}/scripts/generate_metadata`, { path: 'u/admin/older', language: 'bun', content: `import { version } from 'svc-test-ver@1.0.0';\nexport function main() { return version; }\n` });
  return ((await res.json()) as { lock: string }).lock;
}
