import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, apiGet, changesOf, newProject, newWorkspace, target, useServer } from './cli-harness.js';
import type { TestServer } from '../http/harness.js';

/** Each svc.yaml option of spec 2.9 that decides what is synced and how, against the real server. */

const server = useServer();

async function seed(s: TestServer, ws: string): Promise<void> {
  await api(s, ws, '/folders/create', { name: 'ops' });
  await api(s, ws, '/folders/create', { name: 'other' });
  await api(s, ws, '/scripts/create', { path: 'f/ops/a', language: 'bun', content: 'export function main() { return "a"; }\n' });
  await api(s, ws, '/scripts/create', { path: 'f/ops/b', language: 'python3', content: 'def main():\n    return "b"\n' });
  await api(s, ws, '/scripts/create', { path: 'f/other/d', language: 'bash', content: 'echo d\n' });
  await api(s, ws, '/scripts/create', { path: 'u/admin/c', language: 'bun', content: 'export function main() { return "c"; }\n' });
  await api(s, ws, '/flows/create', { path: 'f/ops/flow', value: { modules: [{ id: 'x', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1; }\n', input_transforms: {} } }] } });
  await api(s, ws, '/resources/type/create', { name: 'weather', schema: { type: 'object', properties: { city: { type: 'string' } } } });
  await api(s, ws, '/resources/create', { path: 'f/ops/db', resource_type: 'postgresql', value: { host: 'db', user: 'app', dbname: 'orders' } });
  await api(s, ws, '/variables/create', { path: 'f/ops/greeting', value: 'hello' });
  await api(s, ws, '/variables/create', { path: 'f/ops/token', value: 's3cret', is_secret: true });
}

async function pullJson(s: TestServer, ws: string, yaml: string, extra: string[] = []) {
  const project = newProject({ 'svc.yaml': yaml });
  const result = await project.svc(['sync', 'pull', '--yes', '--json-output', ...target(s, ws), ...extra]);
  expect(result.code, result.stderr).toBe(0);
  return { project, result, changes: changesOf(result) };
}

describe('what is synced', () => {
  it('includes, extraIncludes and excludes select paths both ways', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const yaml = 'includes: ["f/ops/**"]\nextraIncludes: ["u/admin/c*"]\nexcludes: ["f/ops/b*", "**/*.variable.yaml"]\n';
    const { project, changes } = await pullJson(s, ws, yaml);
    expect(changes.filter((c) => !c.includes('resource_type'))).toEqual(['+ flow f/ops/flow', '+ folder ops', '+ resource f/ops/db', '+ script f/ops/a', '+ script u/admin/c']);
    expect(project.exists('f/ops/b.py') || project.exists('f/other/d.sh') || project.exists('f/ops/greeting.variable.yaml')).toBe(false);

    project.write('f/other/new.sh', 'echo new\n');
    project.write('f/ops/b2.sh', 'echo excluded\n');
    project.write('f/ops/included.sh', 'echo included\n');
    const push = await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]);
    expect(changesOf(push)).toEqual(['+ script f/ops/included']);
  });

  it('each skip flag leaves its kind out of pull and push', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const all = (await pullJson(s, ws, '{}')).changes;
    const kinds: Record<string, string> = { skipScripts: 'script', skipFlows: 'flow', skipResources: 'resource', skipVariables: 'variable', skipResourceTypes: 'resource_type', skipFolders: 'folder' };
    for (const [flag, kind] of Object.entries(kinds)) {
      expect(all.some((c) => c.split(' ')[1] === kind), kind).toBe(true);
      const { project, changes } = await pullJson(s, ws, `${flag}: true\n`);
      expect(changes.filter((c) => c.split(' ')[1] === kind), flag).toEqual([]);
      expect(changes.length, flag).toBeGreaterThan(0);
      // A local file of the skipped kind is not pushed either.
      const local: Record<string, [string, string]> = {
        script: ['f/ops/local_only.sh', 'echo x\n'],
        flow: ['f/ops/local_only.flow/flow.yaml', 'value:\n  modules: []\n'],
        resource: ['f/ops/local_only.resource.yaml', 'resource_type: weather\nvalue: {}\n'],
        variable: ['f/ops/local_only.variable.yaml', 'value: x\n'],
        resource_type: ['local_only.resource-type.yaml', 'schema: {type: object}\n'],
        folder: ['f/local_only/folder.meta.yaml', 'summary: x\n'],
      };
      project.write(...local[kind]);
      const push = await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]);
      expect(changesOf(push), flag).toEqual([]);
    }
  });

  it('skipSecrets: false pulls secrets encrypted with the workspace key; plainSecrets writes them in plain text', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const encrypted = await pullJson(s, ws, 'skipSecrets: false\n');
    expect(encrypted.changes).toContain('+ variable f/ops/token');
    const file = encrypted.project.read('f/ops/token.variable.yaml');
    expect(file).toMatch(/encrypted_value: svc-sync:v1:/);
    expect(file).not.toContain('s3cret');
    // Pulling again writes the same ciphertext: no change.
    const again = await encrypted.project.svc(['sync', 'pull', '--json-output', ...target(s, ws)]);
    expect(changesOf(again)).toEqual([]);
    // The encrypted file pushes back: the server decrypts it.
    encrypted.project.write('f/ops/token.variable.yaml', file.replace('description: ""', 'description: rotated'));
    expect((await encrypted.project.svc(['sync', 'push', '--yes', ...target(s, ws)])).code).toBe(0);
    expect((await apiGet(s, ws, '/variables/get/f/ops/token')).body).toMatchObject({ value: 's3cret', description: 'rotated', is_secret: true });

    const plain = await pullJson(s, ws, 'skipSecrets: false\nplainSecrets: true\n');
    expect(plain.project.read('f/ops/token.variable.yaml')).toContain('value: s3cret');

    // By default secrets stay out both ways, even when a file is there.
    const skipping = await pullJson(s, ws, '{}');
    expect(skipping.project.exists('f/ops/token.variable.yaml')).toBe(false);
    skipping.project.write('f/ops/new_secret.variable.yaml', 'is_secret: true\nvalue: x\n');
    expect(changesOf(await skipping.project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]))).toEqual([]);
  });

  it('includeKey carries the encryption key, so another workspace can take the encrypted secrets', async () => {
    const s = server();
    const source = await newWorkspace(s);
    await api(s, source, '/variables/create', { path: 'u/admin/api_key', value: 'k-123', is_secret: true });
    const { project } = await pullJson(s, source, 'skipSecrets: false\nincludeKey: true\n');
    expect(project.read('encryption_key.yaml')).toMatch(/^key: [A-Za-z0-9_-]{43}\n$/);

    // Without the key, another workspace cannot decrypt the file.
    const withoutKey = await newWorkspace(s);
    project.write('svc.yaml', 'skipSecrets: false\n');
    const refused = await project.svc(['sync', 'push', '--yes', ...target(s, withoutKey)]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("not encrypted for u/admin/api_key with this workspace's sync key");
    expect((await apiGet(s, withoutKey, '/variables/get/u/admin/api_key')).status).toBe(404);

    // With includeKey the key goes first, then the secret decrypts. Every workspace has a key of
    // its own, so replacing it is a conflict that must be forced (files encrypted with it would no
    // longer push).
    const withKey = await newWorkspace(s);
    project.write('svc.yaml', 'skipSecrets: false\nincludeKey: true\n');
    const conflict = await project.svc(['sync', 'push', '--yes', ...target(s, withKey)]);
    expect(conflict.code).toBe(4);
    expect(conflict.stdout).toContain('! conflict: encryption key encryption_key');
    const pushed = await project.svc(['sync', 'push', '--yes', '--force', ...target(s, withKey)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect((await apiGet(s, withKey, '/variables/get/u/admin/api_key')).body.value).toBe('k-123');
  });

  it('includeGroups, includeUsers and includeSettings add those kinds', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    expect((await s.post('/api/users/create', { username: `u${ws.replace(/-/g, '')}`, email: `${ws}@example.com` })).status).toBe(201);
    const alice = `u${ws.replace(/-/g, '')}`;
    await api(s, ws, '/workspaces/add_user', { username: alice, role: 'developer' });
    await api(s, ws, '/groups/create', { name: 'oncall', summary: 'pagers' });

    const without = await pullJson(s, ws, '{}');
    expect(without.project.exists('groups/oncall.group.yaml') || without.project.exists(`users/${alice}.user.yaml`) || without.project.exists('settings.yaml')).toBe(false);

    const { project, changes } = await pullJson(s, ws, 'includeGroups: true\nincludeUsers: true\nincludeSettings: true\n');
    expect(changes).toEqual(expect.arrayContaining(['+ group oncall', `+ user ${alice}`, '+ user admin', '+ settings settings']));
    expect(project.read('groups/oncall.group.yaml')).toBe('summary: pagers\nmembers: []\n');
    expect(project.read(`users/${alice}.user.yaml`)).toBe('role: developer\n');
    expect(project.read('settings.yaml')).toBe('object_storage_enabled: false\n');

    project.write('groups/oncall.group.yaml', `summary: pagers\nmembers: [${alice}]\n`);
    project.write(`users/${alice}.user.yaml`, 'role: operator\n');
    project.write('settings.yaml', 'object_storage_enabled: true\n');
    const pushed = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect((await apiGet(s, ws, '/groups/get/oncall')).body.members).toEqual([alice]);
    expect((await apiGet<{ username: string; role: string }[]>(s, ws, '/users/list')).body.find((m) => m.username === alice)?.role).toBe('operator');
    expect((await apiGet(s, ws, '/workspaces/get_settings')).body.object_storage_enabled).toBe(true);

    // The API keeps a group's summary as created: an edit of it is reported, not dropped.
    project.write('groups/oncall.group.yaml', `summary: renamed\nmembers: [${alice}]\n`);
    const renamed = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(renamed.code).toBe(1);
    expect(renamed.stderr).toContain('the summary of group oncall cannot be changed through the API');
  });

  it('kinds this server does not have are left alone, with a warning unless svc.yaml skips them', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const files = {
      'f/ops/raw__raw_app/index.html': '<p/>\n',
      'f/ops/feed.kafka_trigger.yaml': 'topics: [orders]\n',
      'dependencies/requirements.txt': 'requests\n',
      'f/ops/decide.dmn': '<definitions/>\n',
      'data_migrations/001_init.sql': 'select 1;\n',
    };
    const project = newProject({ ...files, 'svc.yaml': '{}\n' });
    const byDefault = await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]);
    expect(byDefault.code, byDefault.stderr).toBe(0);
    const warnings = (JSON.parse(byDefault.stdout).warnings as string[]).join('\n');
    for (const label of ['raw apps: 1 file(s)', 'workspace dependencies', 'DMN decision tables', 'data migrations']) expect(warnings).toContain(`this server has no ${label}`);
    expect(warnings).not.toContain('triggers');
    expect(changesOf(byDefault)).toEqual([]);

    project.write('svc.yaml', 'includeSchedules: true\nincludeTriggers: true\nskipApps: true\nskipWorkspaceDependencies: true\nskipDmn: true\nskipDataMigrations: true\n');
    const flipped = JSON.parse((await project.svc(['sync', 'pull', '--yes', '--json-output', ...target(s, ws)])).stdout);
    // HTTP routes and schedules are kinds of this server (sync-triggers.test.ts); other triggers are not.
    expect(flipped.warnings.join('\n')).toMatch(/no triggers other than HTTP routes: 1 file/);
    expect(flipped.warnings.join('\n')).not.toMatch(/apps|dependencies|DMN|migrations/);
    // A pull never deletes them.
    for (const f of Object.keys(files)) expect(project.exists(f), f).toBe(true);
  });
});

describe('how it is synced', () => {
  it('locksRequired refuses a push of scripts without lock files, listing them; locks round-trip', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const project = newProject({
      'svc.yaml': 'locksRequired: true\n',
      'f/ops/a.ts': 'export function main() { return 1; }\n',
      'f/ops/b.py': 'def main():\n    return 2\n',
      'f/ops/c.sh': 'echo 3\n',
      'f/ops/a.script.lock': '{"dependencies": {}}\n',
    });
    const refused = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('locksRequired');
    expect(refused.stderr).toContain('  f/ops/b\n');
    expect(refused.stderr).not.toContain('f/ops/a\n');
    expect(refused.stderr).not.toContain('f/ops/c\n'); // Bash has no dependencies to lock
    expect((await apiGet(s, ws, '/scripts/get/p/f/ops/a')).status).toBe(404);

    project.write('f/ops/b.script.lock', 'requests==2.32.0\n');
    expect((await project.svc(['sync', 'push', '--yes', ...target(s, ws)])).code).toBe(0);
    expect((await apiGet(s, ws, '/scripts/get/p/f/ops/b')).body.lock).toBe('requests==2.32.0\n');
    const other = await pullJson(s, ws, '{}');
    expect(other.project.read('f/ops/b.script.lock')).toBe('requests==2.32.0\n');

    // Without locksRequired a script without a lock pushes.
    const relaxed = newProject({ 'f/ops/d.py': 'def main():\n    return 4\n' });
    expect((await relaxed.svc(['sync', 'push', '--yes', ...target(s, ws)])).code).toBe(0);
  });

  it('lint checks every file first and pushes nothing if one fails; without it the rest is pushed', async () => {
    const s = server();
    const files = {
      'f/ops/good.py': 'def main():\n    return 1\n',
      'f/ops/bad.py': 'def main(:\n    return 2\n',
      'f/ops/broken.resource.yaml': 'resource_type: postgresql\nvalue: {host: db\n',
    };
    const linted = await newWorkspace(s);
    const strict = newProject({ ...files, 'svc.yaml': 'lint: true\n' });
    const refused = await strict.svc(['sync', 'push', '--yes', ...target(s, linted)]);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('lint failed; nothing was pushed');
    expect(refused.stderr).toContain('f/ops/bad: cannot parse the signature of main');
    expect(refused.stderr).toContain('f/ops/broken.resource.yaml: not valid YAML');
    expect((await apiGet(s, linted, '/scripts/get/p/f/ops/good')).status).toBe(404);

    const unlinted = await newWorkspace(s);
    const relaxed = newProject({ ...files, 'svc.yaml': 'lint: false\n' });
    const partial = await relaxed.svc(['sync', 'push', '--yes', ...target(s, unlinted)]);
    expect(partial.code).toBe(1);
    expect(partial.stderr).toContain('f/ops/broken.resource.yaml: not valid YAML');
    expect(partial.stderr).toMatch(/failed: \+ script f\/ops\/bad: .*400/);
    expect((await apiGet(s, unlinted, '/scripts/get/p/f/ops/good')).status).toBe(200);
  });

  it('nonDottedPaths writes and reads __flow folders', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const { project } = await pullJson(s, ws, 'nonDottedPaths: true\n');
    expect(project.exists('f/ops/flow__flow/flow.yaml')).toBe(true);
    expect(project.exists('f/ops/flow.flow/flow.yaml')).toBe(false);
    project.write('f/ops/second__flow/flow.yaml', 'summary: second\nvalue:\n  modules:\n    - id: s\n      value:\n        type: rawscript\n        language: python3\n        content: "!inline s.inline_script.py"\n');
    project.write('f/ops/second__flow/s.inline_script.py', 'def main():\n    return "second"\n');
    const push = await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]);
    expect(changesOf(push)).toEqual(['+ flow f/ops/second']);
    expect((await apiGet(s, ws, '/flows/get/f/ops/second')).body.value.modules[0].value.content).toBe('def main():\n    return "second"\n');
    // The hand-written flow.yaml leaves defaults out (input_transforms): still no change on the next pull.
    expect(changesOf(await project.svc(['sync', 'pull', '--json-output', ...target(s, ws)]))).toEqual([]);
    const dotted = await pullJson(s, ws, '{}');
    expect(dotted.project.exists('f/ops/second.flow/s.inline_script.py')).toBe(true);
  });

  it('defaultTs decides the runtime of .ts files', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const { project } = await pullJson(s, ws, 'defaultTs: deno\n');
    expect(project.exists('f/ops/a.bun.ts')).toBe(true);
    project.write('f/ops/fresh.ts', 'export function main() { return "deno"; }\n');
    expect((await project.svc(['sync', 'push', '--yes', ...target(s, ws)])).code).toBe(0);
    expect((await apiGet(s, ws, '/scripts/get/p/f/ops/fresh')).body.language).toBe('deno');

    const bun = newProject({ 'svc.yaml': 'defaultTs: bun\n', 'f/ops/fresh2.ts': 'export function main() { return "bun"; }\n' });
    expect((await bun.svc(['sync', 'push', '--yes', ...target(s, ws)])).code).toBe(0);
    expect((await apiGet(s, ws, '/scripts/get/p/f/ops/fresh2')).body.language).toBe('bun');
  });

  it('syncBehavior v1 strips ownership on pull and keeps it on update', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const legacy = await pullJson(s, ws, '{}');
    expect(legacy.project.read('f/ops/db.resource.yaml')).toContain('created_by: admin');
    const v1 = await pullJson(s, ws, 'syncBehavior: v1\n');
    expect(v1.project.read('f/ops/db.resource.yaml')).not.toContain('created_by');

    // A resource another user created keeps its creator when a push updates it.
    const owner = `o${ws.replace(/-/g, '')}`;
    expect((await s.post('/api/users/create', { username: owner, email: `${owner}@example.com`, password: PASSWORD })).status).toBe(201);
    await api(s, ws, '/workspaces/add_user', { username: owner, role: 'admin' });
    const res = await fetch(`${s.url}/api/w/${ws}/resources/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await ownerToken(s, owner)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path: 'f/ops/theirs', resource_type: 'weather', value: { city: 'Oslo' } }),
    });
    expect(res.status).toBe(201);
    const project = v1.project;
    expect((await project.svc(['sync', 'pull', '--yes', ...target(s, ws)])).code).toBe(0);
    project.write('f/ops/theirs.resource.yaml', project.read('f/ops/theirs.resource.yaml').replace('Oslo', 'Bergen'));
    expect((await project.svc(['sync', 'push', '--yes', ...target(s, ws)])).code).toBe(0);
    expect((await apiGet(s, ws, '/resources/get/f/ops/theirs')).body).toMatchObject({ created_by: owner, value: { city: 'Bergen' } });
  });

  it('writes files in a stable order: the same workspace pulls to the same bytes', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const first = await pullJson(s, ws, '{}');
    const second = await pullJson(s, ws, '{}');
    for (const f of ['f/ops/flow.flow/flow.yaml', 'f/ops/db.resource.yaml', 'weather.resource-type.yaml', 'f/ops/folder.meta.yaml']) {
      expect(readFileSync(join(second.project.dir, f), 'utf8')).toBe(first.project.read(f));
    }
  });
});

const PASSWORD = 'a long enough password';

/** A token of `username`, made as the user would: log in, then create one. */
async function ownerToken(s: TestServer, username: string): Promise<string> {
  const login = await fetch(`${s.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: username, password: PASSWORD }) });
  if (login.status !== 200) throw new Error(`login ${username}: ${login.status} ${await login.text()}`);
  const cookie = login.headers.get('set-cookie')!.split(';')[0];
  const token = await fetch(`${s.url}/api/users/tokens/create`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ label: 'cli test' }) });
  return token.text();
}
