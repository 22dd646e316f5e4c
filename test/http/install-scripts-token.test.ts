import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from './harness.js';
import { startFakeNpmRegistry, type FakeNpmRegistry } from './fake-npm-registry.js';

/**
 * A private registry's token (SVC_NPM_TOKEN) with install scripts allowed (SVC_NPM_INSTALL_SCRIPTS=1):
 * a hostile package published to that registry, or any dependency of one, runs its postinstall in
 * the install's directory, as the install's uid, and looks for the token everywhere it can (the
 * configs npm reads, its environment, the environment and command line of every process it can
 * see, its ancestors among them, every file of the install directory, npm's cache and logs
 * included) and writes what it read into the installed tree. It must find nothing, while the
 * token-protected tarballs still install and the packages' scripts still run as npm ci runs them.
 * Local shell only: on AWS install scripts never run.
 */
const aws = process.env.SVC_TEST_SHELL === 'aws';
const token = `npm-secret-${Math.random().toString(36).slice(2)}`;
let s: TestServer;
let registry: FakeNpmRegistry;
let depsDir: string;

/** Everything the postinstall can read that might hold the token, into found.txt beside it. */
const snoop = `
const fs = require('node:fs');
const path = require('node:path');
const found = [];
const read = (what, file) => {
  try { found.push(what + ': ' + fs.readFileSync(file, 'latin1').slice(0, 65536)); } catch (error) { found.push(what + ': ' + error.code); }
};
for (const config of ['.npmrc', '../.npmrc', '../../.npmrc', '../../../.npmrc']) read(config, config);
read('userconfig', process.env.npm_config_userconfig || '/nonexistent');
read('home', path.join(process.env.HOME || '/nonexistent', '.npmrc'));
found.push('env: ' + JSON.stringify(process.env));
// Its ancestors (the shell npm started it with, npm, what started npm), then every process in sight.
const ancestors = [];
for (let pid = process.ppid; pid > 0; ) {
  ancestors.push(pid);
  read('environ ' + pid, '/proc/' + pid + '/environ');
  read('cmdline ' + pid, '/proc/' + pid + '/cmdline');
  let stat;
  try { stat = fs.readFileSync('/proc/' + pid + '/stat', 'utf8'); } catch { break; }
  pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}
found.push('ancestors: ' + ancestors.join(' '));
for (const pid of fs.readdirSync('/proc').filter((name) => /^[0-9]+$/.test(name))) {
  read('environ ' + pid, '/proc/' + pid + '/environ');
  read('cmdline ' + pid, '/proc/' + pid + '/cmdline');
}
// Every file of the install directory and of its parent it can read (npm's cache and logs too).
const walk = (dir) => {
  let names = [];
  try { names = fs.readdirSync(dir); } catch (error) { found.push('dir ' + dir + ': ' + error.code); return; }
  for (const name of names) {
    const file = path.join(dir, name);
    let info;
    try { info = fs.lstatSync(file); } catch { continue; }
    if (info.isDirectory()) walk(file);
    else if (info.isFile()) read('file ' + file, file);
  }
};
walk(path.resolve('../../..'));
fs.writeFileSync('found.txt', found.join('\\n'));
`;

beforeAll(async () => {
  if (aws) return;
  const step = (name: string) => `node -e "require('fs').appendFileSync('lifecycle.txt', '${name}\\n')"`;
  registry = await startFakeNpmRegistry(
    [
      {
        name: 'svc-test-snoop',
        version: '1.0.0',
        type: 'module',
        main: 'index.js',
        files: { 'index.js': 'import { readFileSync } from "node:fs";\nexport const found = () => readFileSync(new URL("./found.txt", import.meta.url), "utf8");\n', 'snoop.cjs': snoop },
        scripts: { postinstall: 'node snoop.cjs' },
      },
      // An optional dependency whose install script fails: npm ci leaves it out and goes on.
      { name: 'svc-test-broken-optional', version: '1.0.0', files: { 'index.js': '' }, scripts: { install: 'exit 3' } },
      {
        name: 'svc-test-lifecycle',
        version: '1.0.0',
        type: 'module',
        main: 'index.js',
        dependencies: { 'svc-test-snoop': '1.0.0' },
        fields: { optionalDependencies: { 'svc-test-broken-optional': '1.0.0' } },
        files: {
          'index.js': `import { existsSync, readFileSync } from "node:fs";
import { found } from "svc-test-snoop";
export const report = () => ({
  lifecycle: readFileSync(new URL("./lifecycle.txt", import.meta.url), "utf8"),
  found: found(),
  brokenOptional: existsSync(new URL("../svc-test-broken-optional", import.meta.url)),
});
`,
        },
        scripts: { preinstall: step('preinstall'), install: step('install'), postinstall: step('postinstall') },
      },
    ],
    { token, echoAuthorization: true },
  );
  depsDir = mkdtempSync(join(tmpdir(), 'svc-deps-token-'));
  s = await startServer({ env: { NPM_CONFIG_REGISTRY: registry.url, SVC_NPM_TOKEN: token, SVC_NPM_INSTALL_SCRIPTS: '1', SVC_DEPS_DIR: depsDir } });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await registry?.close();
  if (depsDir) rmSync(depsDir, { recursive: true, force: true });
});

/** The files under `dir` that hold `text`. */
function filesHolding(dir: string, text: string): string[] {
  const holding: string[] = [];
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const file = join(dir, name);
    if (lstatSync(file).isFile() && readFileSync(file, 'latin1').includes(text)) holding.push(name);
  }
  return holding;
}

describe.skipIf(aws)('install scripts beside a private registry', () => {
  it("install from the token-protected registry, run as npm ci runs them, and find none of the token", async () => {
    const content = `import { report } from 'svc-test-lifecycle';\nexport function main() { return report(); }\n`;
    const created = await s.post(`/api/w/${s.workspace}/scripts/create`, { path: 'u/admin/snooped', language: 'bun', content });
    expect(created.status, await created.clone().text()).toBe(201);
    const run = await s.fetch(`/api/w/${s.workspace}/jobs/run_wait_result/p/u/admin/snooped`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const body = (await run.json()) as { lifecycle: string; found: string; brokenOptional: boolean };
    expect(run.status, JSON.stringify(body).slice(0, 2000)).toBe(200);
    // The package's three scripts ran, in npm's order; the optional package whose script failed is left out.
    expect(body.lifecycle).toBe('preinstall\ninstall\npostinstall\n');
    expect(body.brokenOptional).toBe(false);
    // The nested dependency's postinstall ran, read the installer's config where npm keeps it, and
    // its ancestors, and found no token there or anywhere else.
    expect(body.found).toContain(`../../.npmrc: registry=${registry.url}`);
    expect(body.found).toMatch(/ancestors: \d+ \d+/);
    expect(body.found.includes(token), 'the postinstall found the token').toBe(false);
    expect(body.found).not.toContain('_authToken');
    // Nor is it anywhere in the cache of installed trees.
    expect(filesHolding(depsDir, token)).toEqual([]);
  });

  it("an install failure does not repeat the token, even when the registry's answer does", async () => {
    const content = `import { x } from 'svc-test-missing';\nexport function main() { return x; }\n`;
    const created = await s.post(`/api/w/${s.workspace}/scripts/create`, { path: 'u/admin/missing', language: 'bun', content });
    const text = await created.text();
    expect(created.status, text).toBe(400);
    expect(text).toContain('svc-test-missing');
    expect(text).toContain('authorization: Bearer <SVC_NPM_TOKEN>');
    expect(text).not.toContain(token);
  });
});
