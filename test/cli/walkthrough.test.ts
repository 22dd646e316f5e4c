import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, apiGet, newProject, newWorkspace, target, useServer } from './cli-harness.js';

/** Rough edges a new user met walking through the README's CLI section against a live server. */

const server = useServer();

/** A new version of a script in the workspace, as a colleague's edit makes it. */
async function editRemotely(s: ReturnType<typeof server>, ws: string, path: string, fields: Record<string, unknown>) {
  const current = (await apiGet<{ hash: string }>(s, ws, `/scripts/get/p/${path}`)).body;
  await api(s, ws, '/scripts/create', { path, language: 'bun', parent_hash: current.hash, ...fields });
}

describe('svc --help for someone who has nothing else', () => {
  it('says where to start: the token in SVC_TOKEN, a profile, init, pull, push, run', async () => {
    const help = await newProject().svc(['--help']);
    expect(help.code).toBe(0);
    const start = help.stdout.slice(help.stdout.indexOf('Start here'));
    expect(help.stdout).toContain('Start here');
    const steps = ['export SVC_TOKEN=', 'svc workspace add', 'svc init', 'svc sync pull', 'svc sync push', 'svc script run'];
    const at = steps.map((step) => start.indexOf(step));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });
});

describe('a script written as a plain .ts file, as the README starts', () => {
  it('conflicts over its code only: the .script.yaml it never had is not shown as deleted', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject({ 'f/ops/hello.ts': 'export function main(name = "world") {\n  return `hello ${name}`;\n}\n' });
    const pushed = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    // A colleague changes it in the workspace; we change it here.
    await editRemotely(s, ws, 'f/ops/hello', { content: 'export function main(name = "world") {\n  return `hi there, ${name}`;\n}\n' });
    project.write('f/ops/hello.ts', 'export function main(name = "world") {\n  return `hello, dear ${name}`;\n}\n');

    const push = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(push.code).toBe(4);
    expect(push.stdout).toContain('--- remote/f/ops/hello.ts');
    expect(push.stdout).toContain('-  return `hi there, ${name}`;');
    expect(push.stdout).toContain('+  return `hello, dear ${name}`;');
    expect(push.stdout).not.toContain('/dev/null');
    expect(push.stdout).not.toContain('hello.script.yaml');
  });

  it('shows a summary the workspace has and the files leave out as what a push would set', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject({ 'f/ops/hello.ts': 'export function main() {\n  return 1;\n}\n' });
    expect((await project.svc(['sync', 'push', '--yes', ...target(s, ws)])).code).toBe(0);
    await editRemotely(s, ws, 'f/ops/hello', { summary: 'says hello', content: 'export function main() {\n  return 1;\n}\n' });
    project.write('f/ops/hello.ts', 'export function main() {\n  return 2;\n}\n');
    const push = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(push.code).toBe(4);
    // Pushing these files would clear the summary: the diff says so, rather than "file deleted".
    expect(push.stdout).toContain('+++ local/f/ops/hello.script.yaml');
    expect(push.stdout).toContain('-summary: says hello');
    expect(push.stdout).toContain('+summary: ""');
  });
});

describe('svc workspace add asking for the token on a terminal', () => {
  // util-linux `script` gives the command a pseudo-terminal: what it shows is what a user would see.
  it('does not show the token as it is typed, and keeps it in the profile', async () => {
    const project = newProject();
    const svc = join(resolve(import.meta.dirname, '../..'), 'bin/svc.js');
    const token = 'typed-secret-token-4242';
    const child = spawn('script', ['-qfec', `${process.execPath} ${svc} workspace add typed main http://127.0.0.1:9 --no-check`, '/dev/null'], {
      cwd: project.dir,
      env: { PATH: process.env.PATH, HOME: project.dir, SVC_CONFIG_DIR: project.configDir, TERM: 'dumb' },
    });
    let screen = '';
    let typed = false;
    child.stdout.on('data', (d) => {
      screen += d;
      // Typed once the prompt is up, as a person would (earlier, the terminal would echo it anyway).
      if (!typed && screen.includes('token: ')) {
        typed = true;
        child.stdin.write(`${token}\r`);
      }
    });
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect(code, screen).toBe(0);
    expect(screen).toContain('added workspace typed');
    expect(screen).not.toContain(token);
    expect(JSON.parse(readFileSync(join(project.configDir, 'workspaces.json'), 'utf8')).workspaces.typed.token).toBe(token);
  });
});
