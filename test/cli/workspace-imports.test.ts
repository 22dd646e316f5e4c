import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../http/harness.js';
import { apiGet, changesOf, newProject, newWorkspace, target } from './cli-harness.js';

/**
 * Workspace imports through the real CLI (docs/workspace-imports.md): a push creates the scripts
 * a script imports before it (the server resolves imports at create, so on a fresh workspace the
 * helper must exist first, whatever the names' order), the importer's lock pins the helper, and
 * a pull writes that lock beside it.
 */
let s: TestServer;

beforeAll(async () => {
  s = await startServer();
}, 120_000);

afterAll(() => s?.stop());

describe('svc sync push with workspace imports', () => {
  it('pushes the helper before the script importing it, and the lock comes back on pull', async () => {
    const ws = await newWorkspace(s, 'imports');
    const project = newProject({
      'svc.yaml': 'defaultTs: bun\n',
      // Sorted by name, the importer comes first.
      'f/ops/a_report.ts': `import { shout } from './z_helper.ts';\nexport function main(name: string) { return shout(name); }\n`,
      // Shared code without main, as Windmill's helpers are.
      'f/ops/z_helper.ts': `export const shout = (s: string) => s.toUpperCase() + '!';\n`,
    });
    const pushed = await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(changesOf(pushed).sort()).toEqual(['+ script f/ops/a_report', '+ script f/ops/z_helper']);
    const run = await project.svc(['script', 'run', 'f/ops/a_report', '-d', '{"name": "ada"}', ...target(s, ws)]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('ADA!');

    const helper = (await apiGet(s, ws, '/scripts/get/p/f/ops/z_helper')).body as { hash: string };
    const lock = (await apiGet(s, ws, '/scripts/get/p/f/ops/a_report')).body.lock as string;
    expect(lock).toBe(`# workspace-import f/ops/z_helper ${helper.hash}\n`);
    expect((await project.svc(['sync', 'pull', '--yes', ...target(s, ws)])).code).toBe(0);
    expect(project.read('f/ops/a_report.script.lock')).toBe(lock);
    expect(changesOf(await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]))).toEqual([]);

    // A new helper: pushed alone, the importer keeps the pinned one ...
    project.write('f/ops/z_helper.ts', `export const shout = (s: string) => s.toUpperCase() + '?';\n`);
    expect(changesOf(await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]))).toEqual(['~ script f/ops/z_helper']);
    const pinned = await project.svc(['script', 'run', 'f/ops/a_report', '-d', '{"name": "ada"}', ...target(s, ws)]);
    expect(pinned.stdout.trim()).toBe('ADA!');
    // ... until generate-metadata resolves the imports again and the new lock is pushed.
    const generated = await project.svc(['script', 'generate-metadata', 'f/ops/a_report.ts', ...target(s, ws)]);
    expect(generated.code, generated.stderr).toBe(0);
    const newHelper = (await apiGet(s, ws, '/scripts/get/p/f/ops/z_helper')).body as { hash: string };
    expect(project.read('f/ops/a_report.script.lock')).toBe(`# workspace-import f/ops/z_helper ${newHelper.hash}\n`);
    expect(changesOf(await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]))).toEqual(['~ script f/ops/a_report']);
    const updated = await project.svc(['script', 'run', 'f/ops/a_report', '-d', '{"name": "ada"}', ...target(s, ws)]);
    expect(updated.stdout.trim()).toBe('ADA?');
  });
});
