import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, apiGet, newProject, newWorkspace, target, useServer } from './cli-harness.js';

const server = useServer();
const SVC = join(resolve(import.meta.dirname, '../..'), 'bin/svc.js');

const CHATTY = `export async function main() {
  console.log('first line');
  await new Promise((r) => setTimeout(r, 4000));
  console.log('second line');
  return 'done';
}
`;

describe('svc script run prints logs live', () => {
  it('shows the first log line while the job is still running, then the rest and the result', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/scripts/create', { path: 'f/ops/chatty', language: 'bun', content: CHATTY });
    const project = newProject();
    const child = spawn(process.execPath, [SVC, 'script', 'run', 'f/ops/chatty', ...target(s, ws)], { cwd: project.dir, env: { PATH: process.env.PATH, HOME: project.dir } });
    let stdout = '';
    let stderr = '';
    let statusAtFirstLine: Promise<string> | undefined;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      // The job's state at the moment its first line reached the terminal.
      statusAtFirstLine ??= stderr.includes('first line')
        ? apiGet<{ status: string; script_path: string }[]>(s, ws, '/jobs/list?script_path_exact=f/ops/chatty').then((r) => r.body[0]!.status)
        : undefined;
    });
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect(code, stderr).toBe(0);
    expect(await statusAtFirstLine).toBe('running');
    expect(stdout).toBe('done\n');
    expect(stderr.indexOf('first line')).toBeLessThan(stderr.indexOf('second line'));
    expect(stderr.match(/first line/g)).toHaveLength(1);
  });
});

describe('svc flow run prints step logs live', () => {
  it("shows a step's first line, prefixed by the step id, while the step is still running", async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/scripts/create', { path: 'f/ops/shout', language: 'bun', content: 'export function main(x: string) { console.log("shouting", x); return x.toUpperCase(); }\n' });
    await api(s, ws, '/flows/create', {
      path: 'f/ops/chatty_flow',
      summary: 'chatty',
      schema: { type: 'object', properties: {} },
      value: {
        modules: [
          { id: 'talk', value: { type: 'rawscript', language: 'bun', content: CHATTY, input_transforms: {} } },
          { id: 'after', value: { type: 'rawscript', language: 'bun', content: 'export function main(x: string) { console.log("after got", x); return x + "!"; }\n', input_transforms: { x: { type: 'javascript', expr: 'results.talk' } } } },
          // A step that runs a workspace script is named by its module id too, not by the script's path.
          { id: 'loud', value: { type: 'script', path: 'f/ops/shout', input_transforms: { x: { type: 'javascript', expr: 'results.after' } } } },
        ],
      },
    });
    const project = newProject();
    const child = spawn(process.execPath, [SVC, 'flow', 'run', 'f/ops/chatty_flow', ...target(s, ws)], { cwd: project.dir, env: { PATH: process.env.PATH, HOME: project.dir } });
    let stdout = '';
    let stderr = '';
    let stepAtFirstLine: Promise<string | undefined> | undefined;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      // The step's state at the moment its first line reached the terminal.
      stepAtFirstLine ??= stderr.includes('[talk] first line')
        ? apiGet<{ status: string; flow_module: string | null }[]>(s, ws, '/jobs/list').then((r) => r.body.find((j) => j.flow_module === 'talk')?.status)
        : undefined;
    });
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect(code, stderr).toBe(0);
    expect(await stepAtFirstLine).toBe('running');
    expect(stdout).toBe('DONE!\n');
    // Each line once, in order; each step's outcome once it ended.
    expect(stderr.match(/first line/g)).toHaveLength(1);
    expect(stderr.match(/second line/g)).toHaveLength(1);
    expect(stderr.indexOf('[talk] first line')).toBeLessThan(stderr.indexOf('second line'));
    expect(stderr).toMatch(/--- step talk \(job [0-9a-f-]+\): success/);
    expect(stderr).toMatch(/--- step after \(job [0-9a-f-]+\): success[^]*after got done/);
    expect(stderr.indexOf('second line')).toBeLessThan(stderr.indexOf('--- step after'));
    expect(stderr).toMatch(/--- step loud \(job [0-9a-f-]+\): success\nshouting done!/);
  });
});
