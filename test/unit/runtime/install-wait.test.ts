import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodeRunner } from '../../../functions/ports.js';
import { Confiner } from '../../../functions/runtime/confinement.js';
import { inInstallJail, MAX_CONCURRENT_INSTALLS } from '../../../functions/runtime/dependencies/confined-install.js';
import { localDependencies, type LocalDependencies } from '../../../functions/runtime/dependencies/local-installers.js';
import { createLocalRunner } from '../../../functions/runtime/index.js';
import { startFakeNpmRegistry, type FakeNpmRegistry } from '../../http/fake-npm-registry.js';
import { request, TEST_UIDS } from './runtime-helpers.js';

/**
 * Installs take turns (MAX_CONCURRENT_INSTALLS at once, each up to its installer's timeout of
 * 300 s): behind a queue of installs of distinct locks, a run of a version whose tree is not there
 * yet waited, holding its worker, for as long as the queue took. It now waits at most
 * SVC_DEPS_WAIT_SECONDS (a second here), fails with DependencyInstallFailed saying so, and the
 * install goes on: a later run finds the tree.
 */
const WAIT_MS = 1000;
const hooks = { onLog: () => undefined, onStream: () => undefined };
let registry: FakeNpmRegistry;
let cacheDir: string;
let workDir: string;
let deps: LocalDependencies;
let runner: CodeRunner;
const confiner = new Confiner({ uidRange: TEST_UIDS });

beforeAll(async () => {
  registry = await startFakeNpmRegistry([{ name: 'svc-test-queued', version: '1.0.0', type: 'module', main: 'index.js', files: { 'index.js': 'export const queued = "installed";\n' } }]);
  cacheDir = mkdtempSync(join(tmpdir(), 'svc-install-wait-'));
  workDir = mkdtempSync(join(tmpdir(), 'svc-install-wait-run-'));
  deps = localDependencies(confiner, { npmRegistry: registry.url, npmToken: undefined, installScripts: false, pipIndexUrl: 'https://pypi.org/simple/', pipExtraIndexUrls: [], cacheDir, waitMs: WAIT_MS });
  runner = createLocalRunner({ workDir, confiner, dependencies: deps });
}, 60_000);

afterAll(async () => {
  await runner?.close();
  await deps?.close();
  await registry?.close();
  for (const dir of [cacheDir, workDir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a run whose install waits behind others', () => {
  it('fails with DependencyInstallFailed after SVC_DEPS_WAIT_SECONDS; the install goes on and a later run uses it', async () => {
    const resolved = await deps.resolve('npm', { 'svc-test-queued': '1.0.0' });
    if (!resolved.ok) throw new Error(resolved.message);
    // Every install turn is taken by an install that has not finished (a slow registry, a large tree).
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const busy = Array.from({ length: MAX_CONCURRENT_INSTALLS }, () => inInstallJail({ confiner, parent: workDir, prefix: 'install', files: {}, work: () => gate }));
    const req = request('bun', `import { queued } from 'svc-test-queued';\nexport function main() { return queued; }\n`, { lock: resolved.lock });
    try {
      const started = Date.now();
      // Before the bound the run waited for the gate, which only opens below: a deadline of our own.
      const first = await Promise.race([runner.run(req, hooks, new AbortController().signal), new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 15_000).unref())]);
      expect(first).toMatchObject({ ok: false, error: { name: 'DependencyInstallFailed', message: expect.stringMatching(/not installed within 1s \(SVC_DEPS_WAIT_SECONDS\)/) } });
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      open();
      await Promise.all(busy);
    }
    // The install was not given up: once its turn comes it completes, and a run then succeeds.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const run = await runner.run(req, hooks, new AbortController().signal);
      if (run.ok) {
        expect(run.result).toBe('installed');
        break;
      }
      expect(run.error.message).toMatch(/SVC_DEPS_WAIT_SECONDS/);
      if (Date.now() > deadline) throw new Error(`the install did not complete: ${run.error.message}`);
    }
  }, 90_000);
});
