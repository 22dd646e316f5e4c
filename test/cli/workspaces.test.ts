import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, apiGet, changesOf, newProject, newWorkspace, target, useServer, type Project } from './cli-harness.js';
import type { TestServer } from '../http/harness.js';

/** svc.yaml `workspaces` (and its deprecated names), git branch validation, profiles, and bad input. */

const server = useServer();

function onBranch(project: Project, branch: string): void {
  execFileSync('git', ['init', '-q', '-b', branch], { cwd: project.dir });
}

async function seed(s: TestServer, ws: string): Promise<void> {
  await api(s, ws, '/folders/create', { name: 'ops' });
  await api(s, ws, '/resources/create', { path: 'f/ops/db', resource_type: 'postgresql', value: { host: 'db', user: 'app', dbname: ws } });
  await api(s, ws, '/variables/create', { path: 'f/ops/greeting', value: `hello from ${ws}` });
  await api(s, ws, '/scripts/create', { path: 'f/ops/hello', language: 'bash', content: 'echo hi\n' });
}

const pull = (project: Project, s: TestServer, extra: string[] = []) => project.svc(['sync', 'pull', '--yes', '--json-output', ...extra], { env: { SVC_TOKEN: s.token } });

describe('workspaces in svc.yaml', () => {
  it('picks the entry of the current git branch; gitBranch and workspaceId default to its name', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const project = newProject({ 'svc.yaml': `workspaces:\n  ${ws}:\n    baseUrl: ${s.url}\n  other:\n    baseUrl: http://127.0.0.1:9\n` });
    onBranch(project, ws);
    const result = await pull(project, s);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).workspace).toBe(ws);
    expect(project.read('f/ops/db.resource.yaml')).toContain(`dbname: ${ws}`);
  });

  it('uses gitBranch, workspaceId and overrides of the entry, and a profile for what the entry leaves out', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const project = newProject({ 'svc.yaml': `workspaces:\n  prod:\n    gitBranch: release\n    workspaceId: ${ws}\n    overrides:\n      skipVariables: true\n` });
    onBranch(project, 'release');
    // No baseUrl in the entry: the profile named like the entry gives it, with the token.
    expect((await project.svc(['workspace', 'add', 'prod', 'unused', s.url, '--token', s.token, '--no-check'])).code).toBe(0);
    const result = await project.svc(['sync', 'pull', '--yes', '--json-output']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).workspace).toBe(ws);
    expect(changesOf(result)).toEqual(['+ folder ops', '+ resource f/ops/db', '+ script f/ops/hello']);
  });

  it('refuses a git branch no workspace names, unless skipBranchValidation', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const yaml = `workspaces:\n  main:\n    workspaceId: ${ws}\n    baseUrl: ${s.url}\n`;
    const project = newProject({ 'svc.yaml': yaml });
    onBranch(project, 'feature-x');
    const refused = await pull(project, s, ['--workspace-id', ws, '--base-url', s.url]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('the current git branch feature-x is not configured in svc.yaml');
    project.write('svc.yaml', yaml + 'skipBranchValidation: true\n');
    const allowed = await pull(project, s, ['--workspace-id', ws, '--base-url', s.url]);
    expect(allowed.code, allowed.stderr).toBe(0);
  });

  it('applies promotionOverrides of the promotion branch (flag or option)', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const yaml = `skipBranchValidation: true\nworkspaces:\n  prod:\n    gitBranch: release\n    promotionOverrides:\n      skipResources: true\n`;
    const plain = newProject({ 'svc.yaml': yaml });
    expect(changesOf(await pull(plain, s, target(s, ws)))).toContain('+ resource f/ops/db');
    const flagged = newProject({ 'svc.yaml': yaml });
    expect(changesOf(await pull(flagged, s, [...target(s, ws), '--promotion', 'release']))).not.toContain('+ resource f/ops/db');
    const option = newProject({ 'svc.yaml': yaml + 'promotion: release\n' });
    expect(changesOf(await pull(option, s, target(s, ws)))).not.toContain('+ resource f/ops/db');
  });

  it('stores specificItems (and commonSpecificItems) as <file>.<workspace>.<type>.yaml', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const yaml = `includeSettings: true
workspaces:
  dev:
    workspaceId: ${ws}
    baseUrl: ${s.url}
    specificItems:
      resources: ["f/ops/db"]
      folders: ["ops"]
      triggers: ["f/ops/*"]
      settings: true
  prod:
    specificItems:
      resources: ["f/ops/db"]
  commonSpecificItems:
    variables: ["f/ops/greet*"]
`;
    const project = newProject({ 'svc.yaml': yaml });
    onBranch(project, 'dev');
    const result = await pull(project, s);
    expect(result.code, result.stderr).toBe(0);
    for (const f of ['f/ops/db.dev.resource.yaml', 'f/ops/greeting.dev.variable.yaml', 'f/ops/folder.dev.meta.yaml', 'settings.dev.yaml', 'f/ops/hello.sh']) expect(project.exists(f), f).toBe(true);
    for (const f of ['f/ops/db.resource.yaml', 'f/ops/greeting.variable.yaml', 'f/ops/folder.meta.yaml', 'settings.yaml']) expect(project.exists(f), f).toBe(false);

    // Another workspace's file is not an item of this one; this workspace's file is.
    project.write('f/ops/db.prod.resource.yaml', 'resource_type: postgresql\nvalue: {host: prod, user: app, dbname: prod}\n');
    project.write('f/ops/db.dev.resource.yaml', project.read('f/ops/db.dev.resource.yaml').replace(`dbname: ${ws}`, 'dbname: dev_edit'));
    const push = await project.svc(['sync', 'push', '--yes', '--json-output'], { env: { SVC_TOKEN: s.token } });
    expect(push.code, push.stderr).toBe(0);
    expect(changesOf(push)).toEqual(['~ resource f/ops/db']);
    expect((await apiGet(s, ws, '/resources/get/f/ops/db')).body.value.dbname).toBe('dev_edit');
    expect((await apiGet(s, ws, '/resources/get/f/ops/db.prod')).status).toBe(404);
  });

  it('accepts the deprecated gitBranches and environments with a warning', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    for (const key of ['gitBranches', 'environments']) {
      const project = newProject({ 'svc.yaml': `${key}:\n  main:\n    workspaceId: ${ws}\n    baseUrl: ${s.url}\n    overrides:\n      skipScripts: true\n` });
      onBranch(project, 'main');
      const result = await pull(project, s);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(`warning: svc.yaml: ${key} is deprecated; rename it to workspaces`);
      expect(JSON.parse(result.stdout).workspace).toBe(ws);
      expect(changesOf(result)).not.toContain('+ script f/ops/hello');
    }
  });
});

describe('svc workspace', () => {
  it('adds, lists, switches and removes profiles in the config dir, readable by the user only', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const project = newProject();
    const added = await project.svc(['workspace', 'add', 'local', ws, s.url, '--token', s.token]);
    expect(added.code, added.stderr).toBe(0);
    const file = join(project.configDir, 'workspaces.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ active: 'local', workspaces: { local: { workspaceId: ws, baseUrl: s.url, token: s.token } } });

    // The active profile is what a sync uses when nothing else says.
    const pulled = await project.svc(['sync', 'pull', '--yes', '--json-output']);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(JSON.parse(pulled.stdout).workspace).toBe(ws);

    expect((await project.svc(['workspace', 'add', 'second', 'main', s.url, '--token', s.token])).code).toBe(0);
    expect((await project.svc(['workspace', 'list'])).stdout).toBe(`  local\t${ws}\t${s.url}\n* second\tmain\t${s.url}\n`);
    expect((await project.svc(['workspace', 'switch', 'local'])).code).toBe(0);
    expect((await project.svc(['workspace', 'list'])).stdout).toContain(`* local\t${ws}`);
    expect((await project.svc(['workspace', 'switch', 'nope'])).code).toBe(2);
    expect((await project.svc(['workspace', 'remove', 'local'])).code).toBe(0);
    expect((await project.svc(['workspace', 'list'])).stdout).toBe(`* second\tmain\t${s.url}\n`);
  });

  it('warns that --token is visible to other users, and says nothing when the token comes from SVC_TOKEN or a profile', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject();
    const inArgv = await project.svc(['whoami', '--base-url', s.url, '--workspace-id', ws, '--token', s.token]);
    // Still works (CI habits), with the warning and the ways to avoid it.
    expect(inArgv.code, inArgv.stderr).toBe(0);
    expect(inArgv.stderr).toContain('warning: --token puts the token on the command line');
    expect(inArgv.stderr).toContain('SVC_TOKEN');
    expect(inArgv.stderr).not.toContain(s.token);

    const fromEnv = await project.svc(['workspace', 'add', 'local', ws, s.url], { env: { SVC_TOKEN: s.token } });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(fromEnv.stderr).not.toContain('warning');
    const fromProfile = await project.svc(['whoami']);
    expect(fromProfile.code, fromProfile.stderr).toBe(0);
    expect(fromProfile.stderr).not.toContain('warning');
  });

  it('uses $XDG_CONFIG_HOME/svc when SVC_CONFIG_DIR is not set', async () => {
    const s = server();
    const project = newProject();
    const xdg = join(project.dir, 'xdg');
    const added = await project.svc(['workspace', 'add', 'x', 'main', s.url, '--token', s.token], { env: { SVC_CONFIG_DIR: '', XDG_CONFIG_HOME: xdg } });
    expect(added.code, added.stderr).toBe(0);
    expect(statSync(join(xdg, 'svc', 'workspaces.json')).mode & 0o777).toBe(0o600);
  });

  it('refuses a profile whose token the server refuses, or whose server is not there', async () => {
    const s = server();
    const project = newProject();
    const bad = await project.svc(['workspace', 'add', 'bad', 'main', s.url, '--token', 'not-a-token']);
    expect(bad.code).toBe(7);
    expect(bad.stderr).toContain('refused the token (401)');
    const gone = await project.svc(['workspace', 'add', 'gone', 'main', `http://127.0.0.1:${await closedPort()}`, '--token', s.token]);
    expect(gone.code).toBe(6);
    expect(gone.stderr).toContain('cannot reach');
    expect((await project.svc(['workspace', 'list'])).stdout).toContain('no workspaces');
  });
});

describe('bad input', () => {
  it('names the offending svc.yaml key and exits 2', async () => {
    const s = server();
    const project = newProject({ 'svc.yaml': 'workspaces:\n  staging:\n    gitBranch: staging\n    foo: 1\ncodebases:\n  - relative_path: x\n    bundle: true\n' });
    const result = await project.svc(['sync', 'pull', ...target(s, 'main')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('workspaces.staging.foo: unknown property');
    expect(result.stderr).toContain('codebases.0.bundle: unknown property');
  });

  it('says so when the server cannot be reached (exit 6) or refuses the token (exit 7)', async () => {
    const s = server();
    const project = newProject();
    const unreachable = await project.svc(['sync', 'pull', '--base-url', `http://127.0.0.1:${await closedPort()}`, '--workspace-id', 'main', '--token', 'x']);
    expect(unreachable.code).toBe(6);
    expect(unreachable.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
    const refused = await project.svc(['sync', 'push', '--base-url', s.url, '--workspace-id', 'main', '--token', 'wrong']);
    expect(refused.code).toBe(7);
    expect(refused.stderr).toContain('refused the token (401)');
    const noWorkspace = await project.svc(['sync', 'pull']);
    expect(noWorkspace.code).toBe(2);
    expect(noWorkspace.stderr).toContain('run svc workspace add');
  });

  it('rejects unknown commands and flags with the usage (exit 2)', async () => {
    const project = newProject();
    const unknown = await project.svc(['sync', 'merge']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('usage:');
    const flag = await project.svc(['sync', 'pull', '--colour']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("Unknown option '--colour'");
  });

  it('svc init writes the commented default and refuses to overwrite it', async () => {
    const project = newProject();
    const first = await project.svc(['init']);
    expect(first.code).toBe(0);
    expect(project.read('svc.yaml')).toContain('skipSecrets: true');
    expect(project.read('.gitignore')).toBe('.svc-sync/\n');
    expect((await project.svc(['init'])).code).toBe(2);
    expect((await project.svc(['init', '--force'])).code).toBe(0);
  });
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}
