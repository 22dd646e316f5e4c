import { describe, expect, it } from 'vitest';
import { api, apiGet, changesOf, newProject, newWorkspace, target, useServer } from './cli-harness.js';

/** svc.yaml `codebases`: scripts in a codebase directory are pushed as one esbuild bundle. */

const server = useServer();

const SVC_YAML = `codebases:
  - relative_path: f/app
    format: esm
    external: ["node:os"]
    inject: ["./shim.ts"]
    define:
      BUILD_ENV: '"production"'
    banner:
      js: "// bundled by svc"
    loader:
      ".txt": text
    excludes: ["skip/**"]
    assets:
      - from: static/readme.md
        to: readme.md
  - relative_path: f/custom
    customBundler: tools/bundle.mjs
`;

const FILES = {
  'svc.yaml': SVC_YAML,
  'f/app/main.ts': `import os from 'node:os';
import { greet } from './lib';
import note from './note.txt';
declare const BUILD_ENV: string;
declare const INJECTED: string;
export function main(name: string) {
  return [greet(name), BUILD_ENV, note.trim(), typeof os.platform, INJECTED].join(' ');
}
`,
  'f/app/main.script.yaml': 'summary: bundled\n',
  'f/app/lib.ts': "export const greet = (name: string) => 'hi ' + name;\n",
  'f/app/note.txt': 'from a text file\n',
  'f/app/shim.ts': "export const INJECTED = 'shimmed';\n",
  'f/app/static/readme.md': '# assets\n',
  'f/app/skip/plain.ts': 'export function main() { return "not bundled"; }\n',
  'f/app/skip/plain.script.yaml': 'summary: outside the codebase\n',
  'f/custom/entry.ts': 'export function main() { return 0; }\n',
  'f/custom/entry.script.yaml': 'summary: custom\n',
  'tools/bundle.mjs': "import { basename } from 'node:path';\nprocess.stdout.write(`export function main() { return 'custom bundle of ${basename(process.argv[2])}'; }\\n`);\n",
};

describe('codebases', () => {
  it('bundles codebase scripts with the configured esbuild options and runs the bundle', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject(FILES);
    const pushed = await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    // Modules without metadata (lib.ts, shim.ts, two.ts) are bundled in, not scripts of their own.
    expect(changesOf(pushed)).toEqual(['+ script f/app/main', '+ script f/app/skip/plain', '+ script f/custom/entry']);

    const main = (await apiGet(s, ws, '/scripts/get/p/f/app/main')).body;
    expect(main.content.startsWith('// bundled by svc\n')).toBe(true); // banner
    expect(main.content).toContain('"production"'); // define
    expect(main.content).toContain('from "node:os"'); // external stays an import
    expect(main.content).not.toContain("from './lib'"); // bundled in
    expect(main.schema.properties).toHaveProperty('name');
    const run = await s.post(`/api/w/${ws}/jobs/run_wait_result/p/f/app/main`, { name: 'Ada' });
    expect(await run.json()).toBe('hi Ada production from a text file function shimmed');

    // excludes: outside the codebase, the file is pushed as it is.
    expect((await apiGet(s, ws, '/scripts/get/p/f/app/skip/plain')).body.content).toBe(FILES['f/app/skip/plain.ts']);
    expect((await apiGet(s, ws, '/scripts/get/p/f/custom/entry')).body.content).toBe("export function main() { return 'custom bundle of entry.ts'; }\n");

    // Assets cannot travel with a one-file script: they are copied beside the bundle, and said so.
    expect(project.read('.svc-sync/bundles/f/app/main.ts/readme.md')).toBe('# assets\n');
    expect(JSON.parse(pushed.stdout).warnings.join('\n')).toContain('assets copied to');

    // The bundle is the same next time: nothing to push or pull.
    expect(changesOf(await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]))).toEqual([]);
    expect(changesOf(await project.svc(['sync', 'pull', '--json-output', ...target(s, ws)]))).toEqual([]);
    // A change in an imported module changes the bundle.
    project.write('f/app/lib.ts', "export const greet = (name: string) => 'hello ' + name;\n");
    expect(changesOf(await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]))).toEqual(['~ script f/app/main']);
  });

  it('never writes a remote bundle over the sources on pull', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject(FILES);
    expect((await project.svc(['sync', 'push', '--yes', ...target(s, ws)])).code).toBe(0);
    const current = (await apiGet(s, ws, '/scripts/get/p/f/app/main')).body;
    await api(s, ws, '/scripts/create', { path: 'f/app/main', language: 'bun', content: 'export function main() { return "edited remotely"; }\n', parent_hash: current.hash });
    const pulled = await project.svc(['sync', 'pull', '--yes', ...target(s, ws)]);
    expect(pulled.code).toBe(1);
    expect(pulled.stderr).toContain('f/app/main.ts is a codebase script');
    expect(project.read('f/app/main.ts')).toBe(FILES['f/app/main.ts']);
  });

  it('format: cjs makes a CommonJS bundle, which runs like the esm one', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject({
      'svc.yaml': 'codebases:\n  - relative_path: f/cjs\n    format: cjs\n  - relative_path: f/esm\n',
      'f/cjs/job.ts': "import { two } from './two';\nexport function main(add: number) { return two() + add; }\n",
      'f/cjs/job.script.yaml': 'summary: cjs\n',
      'f/cjs/two.ts': 'export const two = () => 2;\n',
      'f/esm/job.ts': "import { two } from './two';\nexport function main(add: number) { return two() + add; }\n",
      'f/esm/job.script.yaml': 'summary: esm\n',
      'f/esm/two.ts': 'export const two = () => 2;\n',
    });
    const pushed = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect((await apiGet(s, ws, '/scripts/get/p/f/cjs/job')).body.content).toContain('module.exports');
    for (const path of ['f/cjs/job', 'f/esm/job']) {
      const run = await s.post(`/api/w/${ws}/jobs/run_wait_result/p/${path}`, { add: 40 });
      expect(await run.json(), path).toBe(42);
    }
  });
});
