import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSync, startServer, type TestServer } from './harness.js';
import { startFakePypiIndex, type FakePypiIndex } from './fake-pypi-index.js';

/**
 * Python scripts that import distributions (issue 31): imports mapped to distributions (`yaml` is
 * PyYAML's), the `# requirements:` block, a hash-pinned lock resolved at create from the
 * instance's index (here a PEP 503 index on loopback with wheels built by the test), installed
 * once, confined, into a tree the job cannot change.
 */
let s: TestServer;
let index: FakePypiIndex;
let depsDir: string;
const ws = () => `/api/w/${s.workspace}`;
const create = (path: string, content: string, extra: Record<string, unknown> = {}) => s.post(`${ws()}/scripts/create`, { path, language: 'python3', content, ...extra });
const getLock = async (path: string) => (await (await s.fetch(`${ws()}/scripts/get/p/${path}`)).json()).lock as string;

beforeAll(async () => {
  index = await startFakePypiIndex([
    { name: 'PyYAML', version: '5.0.0', files: { 'yaml/__init__.py': '__version__ = "5.0.0"\n' } },
    { name: 'PyYAML', version: '6.0.0', files: { 'yaml/__init__.py': '__version__ = "6.0.0"\n' } },
    { name: 'svc-test-helper', version: '1.0.0', files: { 'svc_test_helper/__init__.py': 'BANG = "!"\n' } },
    { name: 'svc-test-greet', version: '1.0.0', files: { 'svc_test_greet/__init__.py': 'from svc_test_helper import BANG\n\ndef greet(name):\n    return "hello " + name + BANG\n' }, requires: ['svc-test-helper>=1'] },
  ]);
  depsDir = mkdtempSync(join(tmpdir(), 'svc-deps-test-'));
  s = await startServer({ env: { PIP_INDEX_URL: index.url, SVC_DEPS_DIR: depsDir } });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await index?.close();
  if (depsDir) rmSync(depsDir, { recursive: true, force: true });
});

describe('Python distributions', () => {
  it('maps imports to distributions, installs their dependencies, and leaves the standard library alone', async () => {
    const content = 'import json, os.path\nimport yaml\nfrom svc_test_greet import greet\n\ndef main(name: str):\n    return {"greeting": greet(name), "yaml": yaml.__version__}\n';
    expect((await create('u/admin/greet', content)).status).toBe(201);
    const lock = await getLock('u/admin/greet');
    expect(lock.split('\n').filter(Boolean).map((l) => l.split(' ')[0]).sort()).toEqual(['PyYAML==6.0.0', 'svc-test-greet==1.0.0', 'svc-test-helper==1.0.0'].sort());
    expect(lock).toMatch(/--hash=sha256:[0-9a-f]{64}/);
    for (const name of ['ada', 'bob']) {
      expect(await runSync(s, 'u/admin/greet', { name })).toEqual({ status: 200, body: { greeting: `hello ${name}!`, yaml: '6.0.0' } });
    }
  });

  it('takes pins from the # requirements: block, and a given lock as it is', async () => {
    const pinned = '# requirements:\n# PyYAML==5.0.0\n\nimport yaml\n\ndef main():\n    return yaml.__version__\n';
    expect((await create('u/admin/yaml_pinned', pinned)).status).toBe(201);
    expect((await runSync(s, 'u/admin/yaml_pinned')).body).toBe('5.0.0');
    const unpinned = 'import yaml\n\ndef main():\n    return yaml.__version__\n';
    expect((await create('u/admin/yaml_locked', unpinned, { lock: await getLock('u/admin/yaml_pinned') })).status).toBe(201);
    expect((await runSync(s, 'u/admin/yaml_locked')).body).toBe('5.0.0');
  });

  it("takes Windmill's # extra_requirements: block as additions and pins too", async () => {
    const content = '# extra_requirements:\n# PyYAML==5.0.0\n# svc-test-helper\n\nimport yaml\nimport svc_test_helper\n\ndef main():\n    return [yaml.__version__, svc_test_helper.BANG]\n';
    expect((await create('u/admin/yaml_extra', content)).status).toBe(201);
    expect((await runSync(s, 'u/admin/yaml_extra')).body).toEqual(['5.0.0', '!']);
  });

  it('a job cannot change the installed distributions', async () => {
    const content = 'import subprocess, yaml\n\ndef main():\n    path = yaml.__file__\n    try:\n        open(path, "a").write("x = 1\\n")\n        wrote = "wrote"\n    except OSError as e:\n        wrote = type(e).__name__\n    shell = subprocess.run(["/bin/sh", "-c", "echo x >> \\"$1\\" && echo wrote", "sh", path], capture_output=True, text=True).stdout.strip()\n    return {"python": wrote, "shell": shell}\n';
    expect((await create('u/admin/py_tamper', content)).status).toBe(201);
    const run = await runSync(s, 'u/admin/py_tamper');
    expect(run.status).toBe(200);
    expect(run.body.python).not.toBe('wrote');
    expect(run.body.shell).not.toBe('wrote');
  });

  it('refuses a distribution the index does not have, naming it, and stores nothing', async () => {
    const res = await create('u/admin/py_missing', 'import svc_test_missing\n\ndef main():\n    return 1\n');
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toContain('svc-test-missing');
    expect((await s.fetch(`${ws()}/scripts/get/p/u/admin/py_missing`)).status).toBe(404);
  });
});

// An index that takes credentials has them in its URL (PIP_INDEX_URL=https://user:password@host/simple/).
describe('a private index', () => {
  const password = `pip-secret-${Math.random().toString(36).slice(2)}`;
  let privateIndex: FakePypiIndex;
  let server: TestServer;
  let cacheDir: string;
  beforeAll(async () => {
    privateIndex = await startFakePypiIndex([{ name: 'svc-test-private', version: '1.0.0', files: { 'svc_test_private/__init__.py': 'SECRET_PACKAGE = "private ok"\n' } }], {
      credentials: `svc-user:${password}`,
    });
    cacheDir = mkdtempSync(join(tmpdir(), 'svc-deps-test-'));
    server = await startServer({ env: { PIP_INDEX_URL: privateIndex.url, SVC_DEPS_DIR: cacheDir } });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await privateIndex?.close();
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  });

  it('installs with the credentials, which neither the job nor the installed tree holds', async () => {
    const content = [
      'import json, os, svc_test_private',
      '',
      'def main():',
      '    # The whole tree the job can read: every file of the installed distributions, and its environment.',
      '    site = os.path.dirname(os.path.dirname(svc_test_private.__file__))',
      '    texts = []',
      '    for folder, _, names in os.walk(os.path.dirname(site)):',
      '        for name in names:',
      '            with open(os.path.join(folder, name), "rb") as f:',
      '                texts.append(f.read().decode("latin-1"))',
      '    return {"package": svc_test_private.SECRET_PACKAGE, "env": json.dumps(dict(os.environ)), "files": " ".join(texts), "count": len(texts)}',
      '',
    ].join('\n');
    const res = await server.post(`/api/w/${server.workspace}/scripts/create`, { path: 'u/admin/py_private', language: 'python3', content });
    expect(res.status, await res.clone().text()).toBe(201);
    const run = await runSync(server, 'u/admin/py_private');
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.package).toBe('private ok');
    expect(run.body.count).toBeGreaterThan(1);
    expect(run.body.files).not.toContain(password);
    expect(run.body.env).not.toContain(password);
    // Nor any file the installer left in the cache of installed trees.
    const holding = readdirSync(cacheDir, { recursive: true, encoding: 'utf8' }).filter((name) => {
      const file = join(cacheDir, name);
      return lstatSync(file).isFile() && readFileSync(file, 'latin1').includes(password);
    });
    expect(holding).toEqual([]);
  });

  it('names the index without its credentials when a distribution cannot be resolved', async () => {
    const res = await server.post(`/api/w/${server.workspace}/scripts/create`, { path: 'u/admin/py_private_missing', language: 'python3', content: 'import svc_test_missing\n\ndef main():\n    return 1\n' });
    const text = await res.text();
    expect(res.status, text).toBe(400);
    expect(text).toContain('svc-test-missing');
    expect(text).toContain(privateIndex.url.replace(`svc-user:${password}@`, ''));
    expect(text).not.toContain(password);
  });
});
