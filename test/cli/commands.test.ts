import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, apiGet, changesOf, newProject, newWorkspace, target, useServer } from './cli-harness.js';
import { cliDocs, DOCS_FILE } from '../../functions/cli/cli-docs.js';

/** The commands beyond sync (run, job, token, whoami, workspace), help, completion and docs, against the real server. */

const server = useServer();

const GENERATOR = `export async function* main(name: string) {
  console.log('starting for', name);
  yield 'hello ';
  yield name;
  console.log('done');
}
`;

describe('svc script run and svc flow run', () => {
  it('runs a script with -d JSON: what it streams and its logs on stderr, the result on stdout', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/scripts/create', { path: 'f/ops/greet', language: 'bun', content: GENERATOR });
    const project = newProject();
    const result = await project.svc(['script', 'run', 'f/ops/greet', '-d', '{"name": "Ada"}', ...target(s, ws)]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('hello Ada\n');
    expect(result.stderr).toContain('hello Ada');
    expect(result.stderr).toContain('starting for Ada');
    expect(result.stderr).toMatch(/job [0-9a-f-]+: success/);

    project.write('args.json', '{"name": "Zed"}');
    const json = await project.svc(['script', 'run', 'f/ops/greet', '-d', '@args.json', '--json-output', ...target(s, ws)]);
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({ status: 'success', success: true, result: 'hello Zed' });
    expect(report.logs).toContain('done');
  });

  it('runs a flow, printing each step\'s logs, and exits 1 when the job fails', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/flows/create', {
      path: 'f/ops/double',
      summary: 'double',
      schema: { type: 'object', properties: { n: { type: 'number' } } },
      value: {
        modules: [
          { id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main(n: number) { console.log("a got", n); return n + 1; }\n', input_transforms: { n: { type: 'javascript', expr: 'flow_input.n' } } } },
          { id: 'b', value: { type: 'rawscript', language: 'bun', content: 'export function main(x: number) { console.log("b got", x); if (x > 100) throw new Error("too big"); return x * 2; }\n', input_transforms: { x: { type: 'javascript', expr: 'results.a' } } } },
        ],
      },
    });
    const project = newProject();
    const ok = await project.svc(['flow', 'run', 'f/ops/double', '-d', '{"n": 4}', ...target(s, ws)]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('10\n');
    expect(ok.stderr).toMatch(/--- step a \(job [0-9a-f-]+\): success\na got 4/);
    expect(ok.stderr).toMatch(/--- step b \(job [0-9a-f-]+\): success\nb got 5/);

    const failed = await project.svc(['flow', 'run', 'f/ops/double', '-d', '{"n": 200}', '--json-output', ...target(s, ws)]);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout).status).toBe('failed');
    expect(failed.stderr).toContain('b got 201');
  });

  it('refuses bad arguments and unknown paths without starting anything', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/scripts/create', { path: 'f/ops/greet', language: 'bun', content: GENERATOR });
    const project = newProject();
    const notObject = await project.svc(['script', 'run', 'f/ops/greet', '-d', '[1]', ...target(s, ws)]);
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toContain('must be a JSON object');
    const missingFile = await project.svc(['script', 'run', 'f/ops/greet', '-d', '@nope.json', ...target(s, ws)]);
    expect(missingFile.code).toBe(2);
    expect(missingFile.stderr).toContain('ENOENT');
    const flowPath = await project.svc(['flow', 'run', 'f/ops/greet', '--json-output', ...target(s, ws)]);
    expect(flowPath.code).toBe(1);
    expect(JSON.parse(flowPath.stdout).error.message).toContain('no flow f/ops/greet');
    expect((await apiGet<unknown[]>(s, ws, '/jobs/list')).body).toEqual([]);
  });
});

describe('svc job', () => {
  it('gets a job, prints its logs and refuses to cancel a finished one', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/scripts/create', { path: 'f/ops/greet', language: 'bun', content: GENERATOR });
    const project = newProject();
    const started = await project.svc(['script', 'run', 'f/ops/greet', '-d', '{"name": "Bo"}', '--no-wait', ...target(s, ws)]);
    expect(started.code, started.stderr).toBe(0);
    const id = started.stdout.trim();
    const followed = await project.svc(['job', 'logs', id, '--follow', ...target(s, ws)]);
    expect(followed.code, followed.stderr).toBe(0);
    expect(followed.stderr).toContain('starting for Bo');

    const got = await project.svc(['job', 'get', id, '--json-output', ...target(s, ws)]);
    expect(JSON.parse(got.stdout)).toMatchObject({ id, status: 'success', result: 'hello Bo' });
    // The CLI labels the runs it starts, so the console's run list says where they came from.
    expect(JSON.parse(got.stdout).trigger).toBe('cli');
    const logs = await project.svc(['job', 'logs', id, ...target(s, ws)]);
    expect(logs.stdout).toContain('starting for Bo');
    const cancel = await project.svc(['job', 'cancel', id, ...target(s, ws)]);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toContain('already finished');
    const unknown = await project.svc(['job', 'get', '00000000-0000-0000-0000-000000000000', ...target(s, ws)]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no job 00000000-0000-0000-0000-000000000000');
  });

  it('cancels a running job', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/scripts/create', { path: 'f/ops/slow', language: 'bash', content: 'sleep 60\n' });
    const project = newProject();
    const id = (await project.svc(['script', 'run', 'f/ops/slow', '--no-wait', ...target(s, ws)])).stdout.trim();
    const cancel = await project.svc(['job', 'cancel', id, '--reason', 'testing', '--json-output', ...target(s, ws)]);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(JSON.parse(cancel.stdout)).toEqual({ id, canceled: true });
    expect((await apiGet(s, ws, `/jobs_u/get/${id}`)).body.status).toBe('canceled');
  });
});

describe('svc token, whoami and workspace', () => {
  it('creates, lists and deletes a token; the new token works and whoami names its user', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject();
    expect((await project.svc(['workspace', 'add', 'local', ws, s.url], { env: { SVC_TOKEN: s.token } })).code).toBe(0);
    const created = await project.svc(['token', 'create', '--label', 'cli-test', '--only-workspace']);
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^\S+$/);

    const who = await project.svc(['whoami', '--json-output', '--base-url', s.url, '--workspace-id', ws], { env: { SVC_TOKEN: token } });
    expect(who.code, who.stderr).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({ username: 'admin', workspace: ws });

    const listed = JSON.parse((await project.svc(['token', 'list', '--json-output'])).stdout) as { token_prefix: string; label: string; workspace_id: string }[];
    const mine = listed.find((t) => t.label === 'cli-test')!;
    expect(mine.workspace_id).toBe(ws);
    expect(token.startsWith(mine.token_prefix)).toBe(true);
    expect((await project.svc(['token', 'list'])).stdout).not.toContain(token);

    expect((await project.svc(['token', 'delete', mine.token_prefix])).code).toBe(0);
    const refused = await project.svc(['whoami', '--base-url', s.url, '--workspace-id', ws], { env: { SVC_TOKEN: token } });
    expect(refused.code).toBe(7);
  });

  it('workspace list, switch and remove answer JSON with --json-output, never the token; unknown names list the known ones', async () => {
    const s = server();
    const project = newProject();
    await project.svc(['workspace', 'add', 'one', 'main', s.url, '--no-check'], { env: { SVC_TOKEN: s.token } });
    await project.svc(['workspace', 'add', 'two', 'main', s.url, '--no-check'], { env: { SVC_TOKEN: s.token } });
    const list = await project.svc(['workspace', 'list', '--json-output']);
    expect(JSON.parse(list.stdout)).toEqual([
      { name: 'one', workspaceId: 'main', baseUrl: s.url, active: false },
      { name: 'two', workspaceId: 'main', baseUrl: s.url, active: true },
    ]);
    expect(list.stdout).not.toContain(s.token);
    expect(JSON.parse((await project.svc(['workspace', 'switch', 'one', '--json-output'])).stdout)).toEqual({ active: 'one' });
    const unknown = await project.svc(['workspace', 'switch', 'three']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no workspace profile named three; the profiles are: one, two');
    const who = await project.svc(['whoami', '--workspace', 'thre']);
    expect(who.code).toBe(2);
    expect(who.stderr).toContain('the profiles are: one, two');
  });
});

describe('help, flags, colour, completion and docs', () => {
  it('prints the version, and every command\'s help has its options, defaults and an example', async () => {
    const project = newProject();
    const version = await project.svc(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')).version);
    const run = await project.svc(['help', 'script', 'run']);
    expect(run.stdout).toContain('-d, --data <json>');
    expect(run.stdout).toContain('(default: "{}")');
    expect(run.stdout).toContain("svc script run f/ops/hello -d '{\"name\": \"Ada\"}'");
    const pull = await project.svc(['sync', 'pull', '--help']);
    for (const flag of ['--skip-variables', '--no-skip-variables', '--include-secrets', '--parallel <n>', '--includes <glob...>']) expect(pull.stdout).toContain(flag);
  });

  it('svc.yaml switches as flags win over the file', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/variables/create', { path: 'f/ops/greeting', value: 'hi' });
    await api(s, ws, '/scripts/create', { path: 'f/ops/hello', language: 'bash', content: 'echo hi\n' });
    const project = newProject({ 'svc.yaml': 'skipVariables: true\n' });
    const fromFile = await project.svc(['sync', 'pull', '--dry-run', '--json-output', ...target(s, ws)]);
    expect(changesOf(fromFile)).toEqual(['+ script f/ops/hello']);
    const flagged = await project.svc(['sync', 'pull', '--dry-run', '--json-output', '--no-skip-variables', '--skip-scripts', ...target(s, ws)]);
    expect(changesOf(flagged)).toEqual(['+ variable f/ops/greeting']);
    const bad = await project.svc(['sync', 'pull', '--parallel', 'many', ...target(s, ws)]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--parallel');
  });

  it('colours the summary for a terminal (FORCE_COLOR here), never with NO_COLOR', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/variables/create', { path: 'f/ops/greeting', value: 'hi' });
    const project = newProject();
    const plain = await project.svc(['sync', 'pull', '--dry-run', ...target(s, ws)]);
    expect(plain.stdout).toContain('+ variable f/ops/greeting');
    expect(plain.stdout).not.toContain('\x1b[');
    const coloured = await project.svc(['sync', 'pull', '--dry-run', ...target(s, ws)], { env: { FORCE_COLOR: '1' } });
    expect(coloured.stdout).toContain('\x1b[32m+ variable f/ops/greeting\x1b[39m');
    const noColour = await project.svc(['sync', 'pull', '--dry-run', ...target(s, ws)], { env: { FORCE_COLOR: '1', NO_COLOR: '1' } });
    expect(noColour.stdout).not.toContain('\x1b[');
  });

  it('bash completion offers the commands, subcommands and flags of the command typed so far', async () => {
    const project = newProject();
    const script = (await project.svc(['completion', 'bash'])).stdout;
    project.write('svc.bash', script);
    const complete = (line: string) =>
      execFileSync('bash', ['-c', `source ./svc.bash; COMP_WORDS=(${line}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _svc; echo "\${COMPREPLY[*]}"`], { cwd: project.dir, encoding: 'utf8' }).trim().split(' ');
    expect(complete("svc ''")).toEqual(expect.arrayContaining(['sync', 'script', 'flow', 'job', 'token', 'workspace', 'whoami', 'init', 'completion']));
    expect(complete('svc sync p')).toEqual(['pull', 'push']);
    expect(complete('svc sync push --dry')).toEqual(['--dry-run']);
    expect(complete('svc job c')).toEqual(['cancel']);
    expect(complete('svc script run f/x --da')).toEqual(['--data']);
  });

  it('zsh completion is made from the same tree', async () => {
    const project = newProject();
    const script = (await project.svc(['completion', 'zsh'])).stdout;
    expect(script.startsWith('#compdef svc')).toBe(true);
    expect(script).toContain("'sync push'");
    expect(script).toContain("'--include-secrets:same as --no-skip-secrets");
    let zsh = true;
    try {
      execFileSync('zsh', ['--version']);
    } catch {
      zsh = false;
    }
    if (zsh) {
      project.write('_svc', script);
      // Parses (zsh -n) without running.
      execFileSync('zsh', ['-n', '_svc'], { cwd: project.dir });
    }
  });

  it('docs/cli.md is what npm run docs:cli generates from the command tree', () => {
    expect(readFileSync(DOCS_FILE, 'utf8')).toBe(cliDocs());
  });
});
