import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSync, startServer, waitForJob, type TestServer } from './harness.js';
import { startFakeNpmRegistry, type FakeNpmRegistry } from './fake-npm-registry.js';

/**
 * Scripts that import npm packages (issue 31), as a user meets them over HTTP: the imports are
 * resolved at create from the instance's registry (here a small one on loopback) into a lock
 * stored on the version, installed once off the request path, confined and without install
 * scripts, and imported by the job from a tree it cannot change.
 */
let s: TestServer;
let registry: FakeNpmRegistry;
let depsDir: string;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const create = (path: string, content: string, extra: Record<string, unknown> = {}) => s.post(`${ws()}/scripts/create`, { path, language: 'bun', content, ...extra });
const esm = (name: string, version: string, files: Record<string, string>, extra: Record<string, unknown> = {}) => ({ name, version, type: 'module' as const, main: 'index.js', files, ...extra });

beforeAll(async () => {
  registry = await startFakeNpmRegistry([
    esm('svc-test-punct', '1.0.0', { 'index.js': 'export const bang = "!";\n' }),
    esm('svc-test-shout', '1.0.0', { 'index.js': 'import { bang } from "svc-test-punct";\nexport function shout(s) { return s.toUpperCase() + bang; }\n' }, { dependencies: { 'svc-test-punct': '^1.0.0' } }),
    esm('svc-test-ver', '1.0.0', { 'index.js': 'export const version = "1.0.0";\n' }),
    esm('svc-test-ver', '2.0.0', { 'index.js': 'export const version = "2.0.0";\n' }),
    esm('@svc-test/scoped', '1.0.0', { 'index.js': 'export const top = 1;\n', 'lib/deep.js': 'export const deep = "deep import";\n' }),
    esm(
      'svc-test-canary',
      '1.0.0',
      { 'index.js': 'import { existsSync } from "node:fs";\nexport const ranInstallScript = () => existsSync(new URL("./canary.txt", import.meta.url));\n' },
      { scripts: { postinstall: 'node -e "require(\'fs\').writeFileSync(\'canary.txt\', \'ran\')"' } },
    ),
  ]);
  depsDir = mkdtempSync(join(tmpdir(), 'svc-deps-test-'));
  s = await startServer({ env: { NPM_CONFIG_REGISTRY: registry.url, SVC_DEPS_DIR: depsDir } });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await registry?.close();
  if (depsDir) rmSync(depsDir, { recursive: true, force: true });
});

describe('npm packages in bun scripts', () => {
  it('imports a package (and its own dependency, and a deep import of a scoped one), warm runs included', async () => {
    const content = `import { shout } from 'svc-test-shout';
import { deep } from '@svc-test/scoped/lib/deep.js';
import type { Something } from 'svc-test-types-only';
export async function main(name: string) { return { shout: shout(name), deep }; }
`;
    const res = await create('u/admin/shout', content);
    expect(res.status).toBe(201);
    // The version is stored with its lock: exact versions and integrity of the whole tree.
    const version = await (await s.fetch(`${ws()}/scripts/get/p/u/admin/shout`)).json();
    const lock = JSON.parse(version.lock);
    expect(lock.packages['node_modules/svc-test-shout'].version).toBe('1.0.0');
    expect(lock.packages['node_modules/svc-test-punct'].integrity).toMatch(/^sha512-/);
    expect(Object.keys(lock.packages[''].dependencies).sort()).toEqual(['@svc-test/scoped', 'svc-test-shout']);
    // The first run may wait for the install; the second is served warm.
    for (const name of ['hi', 'again']) {
      const run = await runSync(s, 'u/admin/shout', { name });
      expect(run).toEqual({ status: 200, body: { shout: `${name.toUpperCase()}!`, deep: 'deep import' } });
    }
  });

  it('runs the version a pin names, and the version a given lock names', async () => {
    expect((await create('u/admin/ver_pinned', `import { version } from 'svc-test-ver@1.0.0';\nexport function main() { return version; }\n`)).status).toBe(201);
    expect((await runSync(s, 'u/admin/ver_pinned')).body).toBe('1.0.0');
    expect((await create('u/admin/ver_latest', `import { version } from 'svc-test-ver';\nexport function main() { return version; }\n`)).status).toBe(201);
    expect((await runSync(s, 'u/admin/ver_latest')).body).toBe('2.0.0');

    // The same unpinned script, created with the older lock: it installs exactly that lock.
    const older = (await (await s.fetch(`${ws()}/scripts/get/p/u/admin/ver_pinned`)).json()).lock as string;
    const res = await create('u/admin/ver_locked', `import { version } from 'svc-test-ver';\nexport function main() { return version; }\n`, { lock: older });
    expect(res.status).toBe(201);
    expect((await runSync(s, 'u/admin/ver_locked')).body).toBe('1.0.0');
    const stored = await (await s.fetch(`${ws()}/scripts/get/p/u/admin/ver_locked`)).json();
    expect(stored.lock).toBe(older);
  });

  it("does not run a package's install script", async () => {
    expect((await create('u/admin/canary', `import { ranInstallScript } from 'svc-test-canary';\nexport function main() { return ranInstallScript(); }\n`)).status).toBe(201);
    expect(await runSync(s, 'u/admin/canary')).toEqual({ status: 200, body: false });
  });

  it('a job cannot change the installed packages, by Node or by a shell', async () => {
    const content = `import { shout } from 'svc-test-shout';
import { writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
export function main() {
  const file = fileURLToPath(import.meta.resolve('svc-test-shout'));
  let node = 'wrote';
  try { writeFileSync(file, 'export const shout = () => "owned";'); } catch (e) { node = e.code; }
  const shell = spawnSync('/bin/sh', ['-c', 'echo "export const shout = () => 1;" > "$1" && echo wrote', 'sh', file], { encoding: 'utf8' });
  return { node, shell: shell.stdout.trim(), before: shout('x') };
}
`;
    expect((await create('u/admin/tamper', content)).status).toBe(201);
    const run = await runSync(s, 'u/admin/tamper');
    expect(run.status).toBe(200);
    expect(run.body.node).not.toBe('wrote');
    expect(run.body.shell).not.toBe('wrote');
    // Another version importing the package still gets the package as installed.
    expect((await create('u/admin/after_tamper', `import { shout } from 'svc-test-shout';\nexport function main() { return shout('ok'); }\n`)).status).toBe(201);
    expect((await runSync(s, 'u/admin/after_tamper')).body).toBe('OK!');
  });

  it('refuses a package or a version the registry does not have, naming it, and stores nothing', async () => {
    const missing = await create('u/admin/missing', `import x from 'svc-test-missing';\nexport function main() { return x; }\n`);
    expect(missing.status).toBe(400);
    expect((await missing.json()).error.message).toContain('svc-test-missing');
    const noVersion = await create('u/admin/missing', `import { version } from 'svc-test-ver@9.9.9';\nexport function main() { return version; }\n`);
    expect(noVersion.status).toBe(400);
    expect((await noVersion.json()).error.message).toContain('svc-test-ver');
    expect((await s.fetch(`${ws()}/scripts/get/p/u/admin/missing`)).status).toBe(404);
  });

  it('refuses a lock that sends the installer elsewhere, and fails runs of a lock whose integrity the registry does not match', async () => {
    const content = `import { version } from 'svc-test-ver';\nexport function main() { return version; }\n`;
    expect((await create('u/admin/ver_source', content)).status).toBe(201);
    const lock = JSON.parse((await (await s.fetch(`${ws()}/scripts/get/p/u/admin/ver_source`)).json()).lock);
    const elsewhere = structuredClone(lock);
    elsewhere.packages['node_modules/svc-test-ver'].resolved = 'http://169.254.169.254/svc-test-ver.tgz';
    const refused = await create('u/admin/elsewhere', content, { lock: JSON.stringify(elsewhere) });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.message).toContain('outside the instance');

    const tampered = structuredClone(lock);
    tampered.packages['node_modules/svc-test-ver'].integrity = `sha512-${Buffer.alloc(64, 7).toString('base64')}`;
    expect((await create('u/admin/tampered', content, { lock: JSON.stringify(tampered) })).status).toBe(201);
    for (let i = 0; i < 2; i++) {
      const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/tampered`, json({}))).text();
      const job = await waitForJob(s, id, 120_000);
      expect(job.status).toBe('failed');
      expect(job.result.error.name).toBe('DependencyInstallFailed');
      expect(job.result.error.message).toContain('svc-test-ver@2.0.0');
      expect(job.result.error.message).toMatch(/integrity/i);
    }
  });
});

// On the AWS shell the token reaches the dependency builder alone (NPM_TOKEN_SECRET_ARN on AWS, its value here).
describe('a private npm registry', () => {
  const token = `npm-secret-${Math.random().toString(36).slice(2)}`;
  let privateRegistry: FakeNpmRegistry;
  let server: TestServer;
  let cacheDir: string;
  beforeAll(async () => {
    privateRegistry = await startFakeNpmRegistry([esm('svc-test-private', '1.0.0', { 'index.js': 'export const secretPackage = "private ok";\n' })], { token });
    cacheDir = mkdtempSync(join(tmpdir(), 'svc-deps-test-'));
    server = await startServer({ env: { NPM_CONFIG_REGISTRY: privateRegistry.url, SVC_NPM_TOKEN: token, SVC_DEPS_DIR: cacheDir } });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await privateRegistry?.close();
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  });

  it('installs with the token, which no job can find', async () => {
    const content = `import { secretPackage } from 'svc-test-private';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
export function main() {
  // The whole tree the job can read: its environment, and every file of the installed packages.
  const root = join(dirname(fileURLToPath(import.meta.resolve('svc-test-private'))), '..', '..');
  const files: string[] = [];
  const walk = (dir: string) => { for (const e of readdirSync(dir, { withFileTypes: true })) { const p = join(dir, e.name); if (e.isDirectory()) walk(p); else if (e.isFile()) files.push(p); } };
  walk(root);
  return { secretPackage, env: JSON.stringify(process.env), files: files.map((f) => readFileSync(f, 'utf8')).join(' '), names: files.map((f) => f.slice(root.length)) };
}
`;
    const res = await server.post(`/api/w/${server.workspace}/scripts/create`, { path: 'u/admin/private', language: 'bun', content });
    expect(res.status, await res.clone().text()).toBe(201);
    const run = await server.fetch(`/api/w/${server.workspace}/jobs/run_wait_result/p/u/admin/private`, json({}));
    const body = (await run.json()) as any;
    expect(body.secretPackage, JSON.stringify(body)).toBe('private ok');
    expect(body.names).not.toContain('/.npmrc');
    expect(body.env).not.toContain(token);
    expect(body.files).not.toContain(token);
  });
});

describe('npm packages in inline flow steps', () => {
  it('are resolved when the flow is created, kept beside its definition, and imported by the step', async () => {
    const step = (id: string, content: string) => ({ id, value: { type: 'rawscript', language: 'bun', content, input_transforms: { name: { type: 'javascript', expr: 'flow_input.name' } } } });
    const created = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/shouting_flow',
      value: { modules: [step('a', "import { shout } from 'svc-test-shout';\nexport async function main(name: string) { return shout(name); }\n")] },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const flow = await (await s.fetch(`${ws()}/flows/get/u/admin/shouting_flow`)).json();
    // The definition is as written; the lock is the version's, by step.
    expect(flow.value.modules[0].value.lock).toBeUndefined();
    expect(JSON.parse(flow.step_locks.a).packages['node_modules/svc-test-shout'].version).toBe('1.0.0');
    const run = await s.fetch(`${ws()}/jobs/run_wait_result/p/u/admin/shouting_flow`, json({ name: 'ada' }));
    expect(run.status, await run.clone().text()).toBe(200);
    expect(await run.json()).toBe('ADA!');

    // Steps that import the same packages share one resolution: the registry is asked once for all three.
    const before = registry.requests.filter((r) => r === '/svc-test-shout').length;
    const three = ['x', 'y', 'z'].map((id) => step(id, `import { shout } from 'svc-test-shout';\nexport async function main(name: string) { return shout(name) + '${id}'; }\n`));
    const shared = await s.post(`${ws()}/flows/create`, { path: 'u/admin/three_shouts', value: { modules: three } });
    expect(shared.status, await shared.clone().text()).toBe(201);
    expect(registry.requests.filter((r) => r === '/svc-test-shout').length - before).toBe(1);

    // A package the registry does not have is refused at create, naming the step, and nothing is stored.
    const missing = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/missing_flow',
      value: { modules: [step('b', "import x from 'svc-test-no-such-package';\nexport function main() { return x; }\n")] },
    });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toMatchObject({ code: 'invalid_flow', step: 'b', message: expect.stringContaining('svc-test-no-such-package') });
    expect((await s.fetch(`${ws()}/flows/get/u/admin/missing_flow`)).status).toBe(404);
  });
});
