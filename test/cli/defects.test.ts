import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, apiGet, changesOf, newProject, newWorkspace, target, useServer } from './cli-harness.js';

/**
 * The defects of issue 16, each as a user meets it: every test here failed before its fix.
 */

const server = useServer();

describe('issue 16 defects', () => {
  it('svc --help, svc help <command> and <command> --help print help (not "unknown command")', async () => {
    const project = newProject();
    const top = await project.svc(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('Usage: svc');
    for (const command of ['sync', 'script', 'flow', 'job', 'token', 'workspace', 'whoami', 'completion']) expect(top.stdout).toContain(command);
    const viaHelp = await project.svc(['help', 'sync']);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toContain('pull');
    const push = await project.svc(['sync', 'push', '--help']);
    expect(push.code).toBe(0);
    expect(push.stdout).toContain('--dry-run');
    expect(push.stdout).toContain('Examples:');
  });

  it('a typo in --workspace fails, naming the workspaces there are, instead of syncing the active profile', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/variables/create', { path: 'f/ops/greeting', value: 'hi' });
    const project = newProject({ 'svc.yaml': `workspaces:\n  staging:\n    workspaceId: ${ws}\n    baseUrl: ${s.url}\n` });
    expect((await project.svc(['workspace', 'add', 'local', ws, s.url, '--token', s.token])).code).toBe(0);
    const result = await project.svc(['sync', 'pull', '--yes', '--workspace', 'stagign']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--workspace stagign: no such workspace');
    expect(result.stderr).toContain('staging');
    expect(result.stderr).toContain('local');
    expect(project.exists('f/ops/greeting.variable.yaml')).toBe(false);
  });

  it('another workspace\'s specificItems file is not a deletion on a branch that does not select it', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/folders/create', { name: 'ops' });
    await api(s, ws, '/resources/create', { path: 'f/ops/db', resource_type: 'postgresql', value: { host: 'db', user: 'app', dbname: 'dev' } });
    // Two branches, one workspace: dev keeps its own file for the resource, prod does not.
    const project = newProject({ 'svc.yaml': `workspaces:\n  dev:\n    workspaceId: ${ws}\n    baseUrl: ${s.url}\n    specificItems:\n      resources: ["f/ops/db"]\n  prod:\n    workspaceId: ${ws}\n    baseUrl: ${s.url}\n` });
    execFileSync('git', ['init', '-q', '-b', 'dev'], { cwd: project.dir });
    const env = { SVC_TOKEN: s.token };
    expect((await project.svc(['sync', 'pull', '--yes'], { env })).code).toBe(0);
    expect(project.exists('f/ops/db.dev.resource.yaml')).toBe(true);
    execFileSync('git', ['checkout', '-q', '-b', 'prod'], { cwd: project.dir });
    const push = await project.svc(['sync', 'push', '--yes', '--json-output'], { env });
    expect(push.code, push.stderr).toBe(0);
    expect(changesOf(push)).toEqual([]);
    expect((await apiGet(s, ws, '/resources/get/f/ops/db')).status).toBe(200);
  });

  it('a group push that fails half-way is rolled back, named in the summary, and the next push has no conflict', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject({ 'svc.yaml': 'includeGroups: true\n', 'groups/ops.group.yaml': 'summary: ops\nmembers: [ghost]\n' });
    const failed = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('failed: + group ops');
    expect(failed.stderr).toContain('rolled back');
    expect((await apiGet(s, ws, '/groups/get/ops')).status).toBe(404);

    project.write('groups/ops.group.yaml', 'summary: ops\nmembers: []\n');
    const fixed = await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(changesOf(fixed)).toEqual(['+ group ops']);
  });

  it('lint: true refuses scripts that do not parse, naming file, line and column, and pushes nothing', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject({
      'svc.yaml': 'lint: true\n',
      'f/ops/bad.ts': 'export function main(a: number) {\n  return a +;\n}\n',
      'f/ops/bad_py.py': 'def main(x):\n    return (x\n',
      'f/ops/bad_sh.sh': 'if true; then\n  echo hi\nfi fi\n',
      'f/ops/good.ts': 'export function main() { return 1; }\n',
    });
    const result = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(/f\/ops\/bad\.ts:2:\d+: Expression expected/);
    expect(result.stderr).toMatch(/f\/ops\/bad_py\.py:\d+:\d+: /);
    expect(result.stderr).toMatch(/f\/ops\/bad_sh\.sh:3:\d+: syntax error/);
    expect(result.stderr).not.toContain('good.ts');
    expect((await apiGet(s, ws, '/scripts/get/p/f/ops/good')).status).toBe(404);
  });

  it('--json-output prints a JSON error on stdout when the command fails before any report', async () => {
    const project = newProject();
    const result = await project.svc(['sync', 'pull', '--json-output']);
    expect(result.code).toBe(2);
    const body = JSON.parse(result.stdout) as { error: { message: string; exitCode: number } };
    expect(body.error.exitCode).toBe(2);
    expect(body.error.message).toContain('svc workspace add');
  });

  it('an unknown workspace is named with the ones the token can use, not a raw 404', async () => {
    const s = server();
    const project = newProject();
    const result = await project.svc(['sync', 'pull', '--base-url', s.url, '--workspace-id', 'no-such-ws', '--token', s.token]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`no workspace no-such-ws at ${s.url}`);
    expect(result.stderr).toMatch(/the workspaces this token can use there are: .*\bmain\b/);
    // As a status, not inside a name: the test workspaces' ids carry the test process's pid.
    expect(result.stderr).not.toMatch(/\b404\b|not found/i);
  });

  it("to a token that is not an instance admin's, an unknown workspace and one it may not use read the same", async () => {
    const s = server();
    const ws = await newWorkspace(s);
    expect((await s.post('/api/users/create', { username: 'outsider', email: 'outsider@example.com', password: 'outsider-password' })).status).toBe(201);
    const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const login = await s.fetch('/api/auth/login', { ...json({ email: 'outsider@example.com', password: 'outsider-password' }), token: null });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const token = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'cli' }), token: null, headers: { cookie, 'content-type': 'application/json' } })).text();
    for (const id of [ws, 'no-such-ws']) {
      const result = await newProject().svc(['sync', 'pull', '--base-url', s.url, '--workspace-id', id, '--token', token]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`no workspace ${id} this token can use at ${s.url}; this token can use no workspace there`);
    }
  });

  it('a missing customBundler is a one-line error, without a stack trace', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject({
      'svc.yaml': 'lint: false\ncodebases:\n  - relative_path: f/custom\n    customBundler: tools/missing.mjs\n',
      'f/custom/entry.ts': 'export function main() { return 0; }\n',
      'f/custom/entry.script.yaml': 'summary: custom\n',
    });
    const result = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('customBundler tools/missing.mjs: no such file');
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it('svc init writes no absolute path into svc.yaml, and the schema it points to is there', async () => {
    const project = newProject();
    expect((await project.svc(['init'])).code).toBe(0);
    const schema = /\$schema=(\S+)/.exec(project.read('svc.yaml'))?.[1] ?? '';
    expect(isAbsolute(schema)).toBe(false);
    expect(existsSync(resolve(project.dir, schema))).toBe(true);
  });

  it('http://127.0.0.1:<port> and http://localhost:<port> are the same server for the sync state', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/variables/create', { path: 'f/ops/greeting', value: 'hi' });
    const project = newProject();
    const viaIp = ['--base-url', s.url, '--workspace-id', ws, '--token', s.token];
    const viaName = ['--base-url', s.url.replace('127.0.0.1', 'localhost') + '/', '--workspace-id', ws, '--token', s.token];
    expect((await project.svc(['sync', 'pull', '--yes', ...viaIp])).code).toBe(0);
    project.write('f/ops/greeting.variable.yaml', project.read('f/ops/greeting.variable.yaml').replace('value: hi', 'value: hello'));
    const push = await project.svc(['sync', 'push', '--yes', '--json-output', ...viaName]);
    expect(push.code, push.stderr).toBe(0);
    expect(changesOf(push)).toEqual(['~ variable f/ops/greeting']);
    expect((await apiGet(s, ws, '/variables/get/f/ops/greeting')).body.value).toBe('hello');
  });

  it('a codebase bundle keeps the parameter types of main (schema from the source entry)', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject({
      'svc.yaml': 'codebases:\n  - relative_path: f/app\n',
      'f/app/job.ts': "import { times } from './lib';\nexport function main(word: string, count: number, loud: boolean = false) {\n  const out = times(word, count);\n  return loud ? out.toUpperCase() : out;\n}\n",
      'f/app/job.script.yaml': 'summary: typed\n',
      'f/app/lib.ts': 'export const times = (w: string, n: number) => w.repeat(n);\n',
    });
    const pushed = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    const schema = (await apiGet(s, ws, '/scripts/get/p/f/app/job')).body.schema;
    expect(schema.properties.word.type).toBe('string');
    expect(schema.properties.count.type).toBe('number');
    expect(schema.properties.loud.type).toBe('boolean');
    expect(schema.required).toEqual(['word', 'count']);
    const run = await s.post(`/api/w/${ws}/jobs/run_wait_result/p/f/app/job`, { word: 'ab', count: 2, loud: true });
    expect(await run.json()).toBe('ABAB');
  });

  it('conflicts show a diff of the workspace against the local files, and how to resolve them', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/variables/create', { path: 'f/ops/greeting', value: 'base' });
    const project = newProject();
    expect((await project.svc(['sync', 'pull', '--yes', ...target(s, ws)])).code).toBe(0);
    await api(s, ws, '/variables/update/f/ops/greeting', { value: 'theirs' });
    project.write('f/ops/greeting.variable.yaml', project.read('f/ops/greeting.variable.yaml').replace('value: base', 'value: mine'));
    const push = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(push.code).toBe(4);
    expect(push.stdout).toContain('--- remote/f/ops/greeting.variable.yaml');
    expect(push.stdout).toContain('+++ local/f/ops/greeting.variable.yaml');
    expect(push.stdout).toContain('-value: theirs');
    expect(push.stdout).toContain('+value: mine');
    expect(push.stdout).toContain('svc sync push --force');
    expect(push.stdout).toContain('svc sync pull --force');
  });
});
