import { describe, expect, it } from 'vitest';
import { api, apiGet, changesOf, newProject, newWorkspace, target, useServer } from './cli-harness.js';
import type { TestServer } from '../http/harness.js';

/**
 * Issue 6's "done when", as a new user would do it: pull a workspace with scripts, a flow,
 * resources, variables and folders; edit, add and delete files; `push --dry-run` lists exactly
 * those changes; push; pull again shows no changes. Plus the safety rules around it.
 */

const server = useServer();

const HELLO = 'export function main(name: string) {\n  return `hi ${name}`;\n}\n';
const PY = 'def main(x: int = 1):\n    return x\n';
const INLINE = 'def main():\n    return 1\n';

async function seed(s: TestServer, ws: string): Promise<void> {
  await api(s, ws, '/folders/create', { name: 'ops', summary: 'operations' });
  await api(s, ws, '/scripts/create', { path: 'f/ops/hello', language: 'bun', content: HELLO, summary: 'says hi' });
  await api(s, ws, '/scripts/create', { path: 'u/admin/py', language: 'python3', content: PY });
  await api(s, ws, '/resources/type/create', { name: 'weather', schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } });
  await api(s, ws, '/resources/create', { path: 'f/ops/db', resource_type: 'postgresql', value: { host: 'db', user: 'app', dbname: 'orders' } });
  await api(s, ws, '/resources/create', { path: 'f/ops/paris', resource_type: 'weather', value: { city: 'Paris' } });
  await api(s, ws, '/variables/create', { path: 'f/ops/greeting', value: 'hello' });
  await api(s, ws, '/variables/create', { path: 'f/ops/token', value: 's3cret', is_secret: true });
  await api(s, ws, '/flows/create', {
    path: 'f/ops/pipeline',
    summary: 'two steps',
    value: {
      modules: [
        { id: 'a', retry: { constant: { attempts: 2, seconds: 1 } }, value: { type: 'rawscript', language: 'python3', content: INLINE, input_transforms: {} } },
        { id: 'b', value: { type: 'script', path: 'f/ops/hello', input_transforms: { name: { type: 'static', value: 'x' } } } },
      ],
      failure_module: { id: 'failure', value: { type: 'rawscript', language: 'python3', content: INLINE, input_transforms: {} } },
    },
  });
}

describe('svc sync: pull, edit, push, pull', () => {
  it('round-trips a workspace and lists exactly the local changes before pushing them', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const project = newProject();
    expect((await project.svc(['init'])).code).toBe(0);

    const pulled = await project.svc(['sync', 'pull', '--yes', '--json-output', ...target(s, ws)]);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(changesOf(pulled)).toEqual([
      '+ flow f/ops/pipeline',
      '+ folder ops',
      '+ resource f/ops/db',
      '+ resource f/ops/paris',
      '+ resource_type weather',
      '+ script f/ops/hello',
      '+ script u/admin/py',
      '+ variable f/ops/greeting',
    ]);
    // One readable file per item, in Windmill's layout.
    expect(project.read('f/ops/hello.ts')).toBe(HELLO);
    expect(project.read('f/ops/hello.script.yaml')).toBe('summary: says hi\ndescription: ""\n');
    expect(project.read('u/admin/py.py')).toBe(PY);
    expect(project.read('f/ops/pipeline.flow/a.inline_script.py')).toBe(INLINE);
    expect(project.read('f/ops/pipeline.flow/flow.yaml')).toContain('content: "!inline a.inline_script.py"');
    // The failure module's code is a file too, and the step's retry is kept.
    expect(project.read('f/ops/pipeline.flow/failure.inline_script.py')).toBe(INLINE);
    expect(project.read('f/ops/pipeline.flow/flow.yaml')).toContain('content: "!inline failure.inline_script.py"');
    expect(project.read('f/ops/pipeline.flow/flow.yaml')).toMatch(/retry:\s+constant:\s+attempts: 2/);
    expect(project.read('f/ops/db.resource.yaml')).toBe('description: ""\nresource_type: postgresql\nvalue:\n  host: db\n  user: app\n  dbname: orders\n');
    expect(project.read('f/ops/greeting.variable.yaml')).toBe('description: ""\nis_secret: false\nvalue: hello\n');
    expect(project.read('f/ops/folder.meta.yaml')).toContain('summary: operations');
    expect(project.read('weather.resource-type.yaml')).toContain('city:');
    // skipSecrets is true by default: the secret is not written.
    expect(project.exists('f/ops/token.variable.yaml')).toBe(false);

    // Edit, add and delete files.
    project.write('f/ops/hello.ts', HELLO.replace('hi', 'hello'));
    project.write('f/ops/db.resource.yaml', project.read('f/ops/db.resource.yaml').replace('orders', 'invoices'));
    project.write('f/ops/pipeline.flow/a.inline_script.py', 'def main():\n    return 2\n');
    project.write('f/ops/report.sh', 'name="$1"\necho "report for $name"\n');
    project.write('f/ops/answer.variable.yaml', 'description: the answer\nvalue: "42"\n');
    project.remove('u/admin/py.py');
    project.remove('u/admin/py.script.yaml');

    const dry = await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(changesOf(dry)).toEqual(['+ script f/ops/report', '+ variable f/ops/answer', '- script u/admin/py', '~ flow f/ops/pipeline', '~ resource f/ops/db', '~ script f/ops/hello']);
    // A dry run changes nothing.
    expect((await apiGet(s, ws, '/scripts/get/p/u/admin/py')).status).toBe(200);
    expect((await apiGet(s, ws, '/scripts/get/p/f/ops/hello')).body.content).toBe(HELLO);

    const pushed = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stdout).toContain('pushed 6 change(s)');
    expect((await apiGet(s, ws, '/scripts/get/p/f/ops/hello')).body.content).toContain('hello ${name}');
    expect((await apiGet(s, ws, '/scripts/get/p/u/admin/py')).status).toBe(404);
    expect((await apiGet(s, ws, '/scripts/get/p/f/ops/report')).body).toMatchObject({ language: 'bash', schema: { properties: { name: {} } } });
    expect((await apiGet(s, ws, '/variables/get/f/ops/answer')).body).toMatchObject({ value: '42', description: 'the answer' });
    expect((await apiGet(s, ws, '/resources/get/f/ops/db')).body.value).toMatchObject({ dbname: 'invoices' });
    const flow = (await apiGet(s, ws, '/flows/get/f/ops/pipeline')).body;
    expect(flow.value.modules[0].value.content).toBe('def main():\n    return 2\n');

    const again = await project.svc(['sync', 'pull', '--json-output', ...target(s, ws)]);
    expect(again.code, again.stderr).toBe(0);
    expect(changesOf(again)).toEqual([]);
    expect(changesOf(await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]))).toEqual([]);
  });

  it('shows a summary with a diff for edits and progress, and says when there is nothing to do', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const project = newProject();
    await project.svc(['sync', 'pull', '--yes', ...target(s, ws)]);
    project.write('f/ops/hello.ts', HELLO.replace('hi', 'hey'));
    project.write('f/ops/greeting.variable.yaml', 'description: ""\nis_secret: false\nvalue: bonjour\n');
    const pushed = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stdout).toContain('~ script f/ops/hello');
    expect(pushed.stdout).toContain('-  return `hi ${name}`;');
    expect(pushed.stdout).toContain('+  return `hey ${name}`;');
    expect(pushed.stdout).toContain('-value: hello');
    expect(pushed.stderr).toMatch(/\[1\/2\] ~ variable f\/ops\/greeting/);
    expect(pushed.stderr).toMatch(/\[2\/2\] ~ script f\/ops\/hello/);
    const nothing = await project.svc(['sync', 'pull', ...target(s, ws)]);
    expect(nothing.code).toBe(0);
    expect(nothing.stdout).toContain('no changes');
  });

  it('deletes a remote item only when its file was deleted and the user confirms', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const project = newProject();
    await project.svc(['sync', 'pull', '--yes', ...target(s, ws)]);
    project.remove('f/ops/greeting.variable.yaml');

    const unanswered = await project.svc(['sync', 'push', ...target(s, ws)]);
    expect(unanswered.code).toBe(3);
    expect(unanswered.stderr).toContain('including 1 deletion(s) in the workspace');
    expect(unanswered.stderr).toContain('not confirmed');
    expect((await apiGet(s, ws, '/variables/get/f/ops/greeting')).status).toBe(200);

    const refused = await project.svc(['sync', 'push', ...target(s, ws)], { input: 'n\n' });
    expect(refused.code).toBe(3);
    expect((await apiGet(s, ws, '/variables/get/f/ops/greeting')).status).toBe(200);

    const confirmed = await project.svc(['sync', 'push', ...target(s, ws)], { input: 'y\n' });
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect((await apiGet(s, ws, '/variables/get/f/ops/greeting')).status).toBe(404);

    // An item that exists only remotely (never pulled) is not deleted by a push.
    await api(s, ws, '/variables/create', { path: 'f/ops/made_remotely', value: 'x' });
    const push = await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]);
    expect(changesOf(push)).toEqual([]);
    expect((await apiGet(s, ws, '/variables/get/f/ops/made_remotely')).status).toBe(200);
  });

  it('reports a conflict and overwrites nothing without --force', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const project = newProject();
    await project.svc(['sync', 'pull', '--yes', ...target(s, ws)]);
    await api(s, ws, '/resources/update/f/ops/db', { value: { host: 'db', user: 'app', dbname: 'remote_edit' } });
    project.write('f/ops/db.resource.yaml', project.read('f/ops/db.resource.yaml').replace('orders', 'local_edit'));

    const push = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(push.code).toBe(4);
    expect(push.stdout).toContain('! conflict: resource f/ops/db changed locally and remotely since the last sync');
    expect((await apiGet(s, ws, '/resources/get/f/ops/db')).body.value.dbname).toBe('remote_edit');

    const pull = await project.svc(['sync', 'pull', '--yes', ...target(s, ws)]);
    expect(pull.code).toBe(4);
    expect(project.read('f/ops/db.resource.yaml')).toContain('local_edit');

    const forced = await project.svc(['sync', 'push', '--yes', '--force', ...target(s, ws)]);
    expect(forced.code, forced.stderr).toBe(0);
    expect((await apiGet(s, ws, '/resources/get/f/ops/db')).body.value.dbname).toBe('local_edit');
  });

  it('records svc.yaml `message` (or --message) on the versions a push creates', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await seed(s, ws);
    const project = newProject({ 'svc.yaml': 'message: release 42\n' });
    await project.svc(['sync', 'pull', '--yes', ...target(s, ws)]);
    project.write('f/ops/hello.ts', HELLO.replace('hi', 'ho'));
    project.write('f/ops/pipeline.flow/flow.yaml', project.read('f/ops/pipeline.flow/flow.yaml').replace('two steps', 'two steps, renamed'));
    expect((await project.svc(['sync', 'push', '--yes', ...target(s, ws)])).code).toBe(0);
    expect((await apiGet(s, ws, '/scripts/get/p/f/ops/hello')).body.deployment_message).toBe('release 42');
    const history = (await apiGet<{ deployment_message?: string }[]>(s, ws, '/flows/history/p/f/ops/pipeline')).body;
    expect(history.map((h) => h.deployment_message)).toEqual(['release 42', undefined]);

    project.write('f/ops/hello.ts', HELLO.replace('hi', 'hu'));
    expect((await project.svc(['sync', 'push', '--yes', '--message', 'hotfix', ...target(s, ws)])).code).toBe(0);
    expect((await apiGet(s, ws, '/scripts/get/p/f/ops/hello')).body.deployment_message).toBe('hotfix');
  });
});
