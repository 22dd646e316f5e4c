import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runSync, startServer, type TestServer } from './harness.js';
import { startFakePypiIndex, type FakePypiIndex } from './fake-pypi-index.js';
import { startFakeNpmRegistry, type FakeNpmRegistry } from './fake-npm-registry.js';

/**
 * Hostile locks (red team, dependency installs). A member writes a script's lock; the installed
 * tree is shared by every version with the same tree key, in any workspace, so whatever the
 * installer is handed must be exactly what the key names.
 */
let s: TestServer;
let index: FakePypiIndex;
let registry: FakeNpmRegistry;
let pypiAuthor: FakePypiIndex;
/** A server of a hostile package author, neither the registry nor an index: it records every request. */
let author: Server;
const authorRequests: string[] = [];
let depsDir: string;
const ws = () => `/api/w/${s.workspace}`;
const create = (path: string, content: string, extra: Record<string, unknown> = {}) => s.post(`${ws()}/scripts/create`, { path, language: 'python3', content, ...extra });
const getLock = async (path: string) => (await (await s.fetch(`${ws()}/scripts/get/p/${path}`)).json()).lock as string;
/** The lock a create would store, resolved without creating (or installing) anything. */
const resolveLock = async (content: string) => {
  const res = await s.post(`${ws()}/scripts/generate_metadata`, { path: 'u/admin/resolving', language: 'python3', content });
  expect(res.status).toBe(200);
  return ((await res.json()) as { lock: string }).lock;
};
/** A lock line of `name==version` from a resolved lock. */
const lineOf = (lock: string, pin: string) => lock.split('\n').find((l) => l.startsWith(`${pin} `))!;

beforeAll(async () => {
  index = await startFakePypiIndex([
    { name: 'PyYAML', version: '5.0.0', files: { 'yaml/__init__.py': '__version__ = "5.0.0"\n' } },
    { name: 'PyYAML', version: '6.0.0', files: { 'yaml/__init__.py': '__version__ = "6.0.0"\n' } },
    { name: 'svc-test-helper', version: '1.0.0', files: { 'svc_test_helper/__init__.py': 'BANG = "planted by another lock"\n' } },
  ]);
  // A hostile package author's packages, which depend on a URL of theirs.
  author = createServer((req, res) => {
    authorRequests.push(req.url ?? '');
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => author.listen(0, '127.0.0.1', resolve));
  const canaryBase = `http://127.0.0.1:${(author.address() as AddressInfo).port}`;
  pypiAuthor = await startFakePypiIndex([
    { name: 'svc-test-urldep', version: '1.0.0', files: { 'svc_test_urldep/__init__.py': 'X = 1\n' }, requires: [`svc-canary @ ${canaryBase}/canary/author-wheel-1.0-py3-none-any.whl`] },
    { name: 'svc-test-gitdep', version: '1.0.0', files: { 'svc_test_gitdep/__init__.py': 'X = 1\n' }, requires: [`svc-canary @ git+${canaryBase}/canary/author-pip.git`] },
  ]);
  registry = await startFakeNpmRegistry([
    { name: 'svc-test-ver', version: '1.0.0', type: 'module', main: 'index.js', files: { 'index.js': 'export const version = "1.0.0";\n' } },
    { name: 'svc-test-urldep', version: '1.0.0', type: 'module', main: 'index.js', files: { 'index.js': 'export const x = 1;\n' }, dependencies: { 'svc-test-canary': `${canaryBase}/canary/author-tarball.tgz` } },
    { name: 'svc-test-gitdep', version: '1.0.0', type: 'module', main: 'index.js', files: { 'index.js': 'export const x = 1;\n' }, dependencies: { 'svc-test-canary': `git+${canaryBase}/canary/author-repo.git` } },
  ]);
  depsDir = mkdtempSync(join(tmpdir(), 'svc-deps-attack-'));
  s = await startServer({ env: { PIP_INDEX_URL: index.url, PIP_EXTRA_INDEX_URL: pypiAuthor.url, NPM_CONFIG_REGISTRY: registry.url, SVC_DEPS_DIR: depsDir } });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await index?.close();
  await registry?.close();
  await pypiAuthor?.close();
  await new Promise((resolve) => (author ? author.close(resolve) : resolve(undefined)));
  if (depsDir) rmSync(depsDir, { recursive: true, force: true });
});

describe('a hostile Python lock', () => {
  // JavaScript splits the lock on \n only; pip reads it with Python's str.splitlines, which also
  // breaks at \r, \v, \f, \x1c-\x1e, \x85, \u2028 and \u2029. A "comment" holding one of those is
  // a second line to pip: another requirement, or an option (-r URL, --index-url, --no-binary).
  const helper = 'import importlib\nimport yaml\n\ndef main():\n    try:\n        return {"yaml": yaml.__version__, "planted": importlib.import_module("svc_test_" + "helper").BANG}\n    except ImportError:\n        return {"yaml": yaml.__version__, "planted": None}\n';

  it('cannot plant a distribution in the tree another lock with the same packages shares', async () => {
    const resolved = await resolveLock('# requirements:\n# PyYAML==5.0.0\n\nimport svc_test_helper\nimport yaml\n\ndef main():\n    return 1\n');
    const yaml5 = lineOf(resolved, 'PyYAML==5.0.0');
    const planted = lineOf(resolved, 'svc-test-helper==1.0.0');

    // The attacker's create installs the tree of its lock's key (PyYAML 5.0.0 alone) at once.
    const attack = await create('u/admin/attacker', helper, { lock: `${yaml5}\n# pinned for reproducibility\x1c${planted}\n` });
    const attackerRun = attack.status === 201 ? await runSync(s, 'u/admin/attacker') : undefined;
    // The victim's lock names PyYAML 5.0.0 alone: its tree is the one the attacker's lock keyed.
    expect((await create('u/admin/victim', helper, { lock: `${yaml5}\n` })).status).toBe(201);
    expect(await runSync(s, 'u/admin/victim')).toEqual({ status: 200, body: { yaml: '5.0.0', planted: null } });
    // Stored or resolved afresh, the attacker's own run sees no extra distribution either.
    if (attackerRun) expect(attackerRun.body.planted ?? null).toBeNull();
    else expect(attack.status).toBe(400);
  });

  it('cannot make the installer fetch a URL of its choosing (pip -r URL)', async () => {
    const yaml6 = lineOf(await resolveLock('# requirements:\n# PyYAML==6.0.0\n\nimport yaml\n\ndef main():\n    return 1\n'), 'PyYAML==6.0.0');
    const secret = `${index.url.replace(/\/simple\/$/, '')}/internal/secret.txt`;
    const res = await create('u/admin/ssrf', 'import yaml\n\ndef main():\n    return yaml.__version__\n', { lock: `# see\x1c-r ${secret}\n${yaml6}\n` });
    if (res.status === 201) await runSync(s, 'u/admin/ssrf');
    expect(index.requests).not.toContain('/internal/secret.txt');
  });
});

describe('hostile Python imports', () => {
  // A private module's name (`_x`) maps to a "distribution" `-x`, which went to pip's argv as is:
  // `import __version` made `pip install ... --version` (an exit 0 with no report), and
  // `__index_url`, `__proxy`, `__isolated`, `_r` options of the member's choosing.
  it('never reach pip as options', async () => {
    for (const option of ['__version', '__help', '__isolated', '_r']) {
      const res = await create(`u/admin/option${option}`, `import ${option}\nimport yaml\n\ndef main():\n    return yaml.__version__\n`);
      expect(res.status, option).toBe(201);
      expect(await getLock(`u/admin/option${option}`)).not.toMatch(/^-/m);
    }
  });
});

describe('a hostile npm lock', () => {
  const content = `import { version } from 'svc-test-ver';\nexport function main() { return version; }\n`;
  /** A URL nobody may make the installer fetch (the PyPI index's server records every request). */
  const canary = (name: string) => `${index.url.replace(/\/simple\/$/, '')}/canary/${name}.tgz`;
  const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const runJob = async (path: string) => {
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/${path}`, json({}));
    return { status: res.status, body: (await res.json()) as any };
  };
  let lock: any;
  beforeAll(async () => {
    expect((await s.post(`${ws()}/scripts/create`, { path: 'u/admin/npm_source', language: 'bun', content })).status).toBe(201);
    lock = JSON.parse(await getLock('u/admin/npm_source'));
  });

  // npm ci fetches what a lock names: a package without `resolved` from whatever its `version`
  // says (a URL, a path), and a dependency spec the tree lacks from wherever the spec points. The
  // installer runs on the host's network, so each was a request of the member's choosing.
  const variants: Record<string, (l: any) => void> = {
    'a version that is a URL': (l) => {
      delete l.packages['node_modules/svc-test-ver'].resolved;
      l.packages['node_modules/svc-test-ver'].version = canary('version');
    },
    "a package's dependency on a URL": (l) => {
      l.packages['node_modules/svc-test-ver'].dependencies = { 'svc-test-other': canary('entrydep') };
    },
    "the root's dependency on a URL": (l) => {
      l.packages[''].dependencies['svc-test-ver'] = canary('root');
    },
    'a git dependency': (l) => {
      l.packages['node_modules/svc-test-ver'].optionalDependencies = { 'svc-test-git': `git+${canary('git')}` };
    },
    'a tarball that is not a string': (l) => {
      l.packages['node_modules/svc-test-ver'].resolved = { url: canary('obj') };
    },
    'an entry that is not an object': (l) => {
      l.packages['node_modules/svc-test-zzz'] = null;
    },
  };
  it('is not installed from elsewhere for a script that imports nothing (the create checks no lock then)', async () => {
    const given = structuredClone(lock);
    variants['a version that is a URL'](given);
    const res = await s.post(`${ws()}/scripts/create`, { path: 'u/admin/npm_no_imports', language: 'bun', content: 'export function main() { return 1; }\n', lock: JSON.stringify(given) });
    if (res.status === 201) {
      await runJob('u/admin/npm_no_imports');
      // The install started at create (off the request path) has had its time.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
    } else expect(((await res.json()) as any).error.message).toMatch(/^lock: .*no exact version/);
    expect(index.requests.filter((r) => r.startsWith('/canary/'))).toEqual([]);
  });

  for (const [name, change] of Object.entries(variants)) {
    it(`is refused, or installs nothing else: ${name}`, async () => {
      const given = structuredClone(lock);
      change(given);
      const path = `u/admin/npm_${name.replace(/\W+/g, '_')}`;
      const res = await s.post(`${ws()}/scripts/create`, { path, language: 'bun', content, lock: JSON.stringify(given) });
      expect([201, 400]).toContain(res.status);
      if (res.status === 201) {
        // Another tool's lock (not npm's): resolved afresh, and the run gets the registry's package.
        expect(JSON.parse(await getLock(path))).not.toEqual(given);
        expect(await runJob(path)).toEqual({ status: 200, body: '1.0.0' });
      } else expect(((await res.json()) as any).error.message).toMatch(/^lock: /);
      expect(index.requests.filter((r) => r.startsWith('/canary/'))).toEqual([]);
    });
  }
});

describe("a hostile package author's dependency on a URL", () => {
  // Resolution follows what a package's metadata names: npm fetches a dependency's URL to read its
  // manifest, pip a wheel's direct URL requirement. The installers run on the host's network; what
  // they reach beyond the registry and indexes goes through the jobs' egress proxy.
  const canaryRequests = (name: string) => authorRequests.filter((r) => r.includes(name));

  it('is not fetched from a loopback or private address by npm', async () => {
    const res = await s.post(`${ws()}/scripts/create`, { path: 'u/admin/npm_author', language: 'bun', content: `import { x } from 'svc-test-urldep';\nexport function main() { return x; }\n` });
    expect(res.status).toBe(400);
    expect(canaryRequests('author-tarball')).toEqual([]);
  });

  it('is not cloned by git, which knows nothing of npm\'s proxy', async () => {
    const res = await s.post(`${ws()}/scripts/create`, { path: 'u/admin/npm_author_git', language: 'bun', content: `import { x } from 'svc-test-gitdep';\nexport function main() { return x; }\n` });
    expect(res.status).toBe(400);
    expect(canaryRequests('author-repo')).toEqual([]);
  });

  it('is not cloned by git for pip either', async () => {
    const res = await create('u/admin/pip_author_git', 'import svc_test_gitdep\n\ndef main():\n    return svc_test_gitdep.X\n');
    expect(res.status).toBe(400);
    expect(canaryRequests('author-pip')).toEqual([]);
  });

  it('is not fetched from a loopback or private address by pip', async () => {
    const res = await create('u/admin/pip_author', 'import svc_test_urldep\n\ndef main():\n    return svc_test_urldep.X\n');
    expect(res.status).toBe(400);
    expect(canaryRequests('author-wheel')).toEqual([]);
  });
});
