import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync, startServer, type TestServer } from './harness.js';

/**
 * Workspace imports (issue 31 item 5, docs/workspace-imports.md), as a user meets them over HTTP
 * in either shell: a Python and a TypeScript script import a helper from another script of the
 * workspace; the version records the helper's exact version in its lock, its jobs keep running
 * that version after the helper changes, and only a new version of the importer picks up the
 * new helper. An import the creator may not read, or that does not exist, is refused with its name.
 */
let s: TestServer;
let alice: string;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function memberToken(username: string, role: string): Promise<string> {
  await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` });
  await s.post(`${ws()}/workspaces/add_user`, { username, role });
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  return (await s.fetch('/api/users/tokens/create', { ...json({ label: 'tests' }), token: null, headers: { cookie, 'content-type': 'application/json' } })).text();
}

async function create(path: string, language: string, content: string, token?: string): Promise<{ status: number; body: any }> {
  const latest = await s.fetch(`${ws()}/scripts/get/p/${path}`, token ? { token } : {});
  const parent_hash = latest.status === 200 ? ((await latest.json()) as { hash: string }).hash : undefined;
  const res = await s.fetch(`${ws()}/scripts/create`, { ...json({ path, language, content, ...(parent_hash ? { parent_hash } : {}) }), ...(token ? { token } : {}) });
  return { status: res.status, body: res.status === 201 ? await res.text() : await res.json() };
}

async function version(path: string): Promise<{ hash: string; lock?: string }> {
  return (await s.fetch(`${ws()}/scripts/get/p/${path}`)).json();
}

beforeAll(async () => {
  s = await startServer();
  alice = await memberToken('alice', 'developer');
  expect((await s.fetch(`${ws()}/folders/create`, json({ name: 'common', extra_perms: { 'u/alice': false } }))).status).toBe(201);
  expect((await s.fetch(`${ws()}/folders/create`, json({ name: 'private' }))).status).toBe(201);
}, 120_000);

afterAll(() => s?.stop());

describe('a script imports another script of its workspace', () => {
  it('Python: from f.folder.name import x, with the helper pinned to the version the importer was created with', async () => {
    expect((await create('f/common/py_text', 'python3', 'def shout(s):\n    return s.upper() + " (v1)"\n')).status).toBe(201);
    // A helper that itself imports another, relatively, as Windmill reads `.name`.
    expect((await create('f/common/py_greet', 'python3', 'from .py_text import shout\n\ndef greet(name):\n    return "hello " + shout(name)\n')).status).toBe(201);
    const importer = 'from f.common.py_greet import greet\nimport f.common.py_text\n\ndef main(name: str):\n    return [greet(name), f.common.py_text.shout("x")]\n';
    expect((await create('u/admin/py_importer', 'python3', importer)).status).toBe(201);
    const first = await version('u/admin/py_importer');
    const helperV1 = await version('f/common/py_text');
    expect(first.lock).toContain(`# workspace-import f/common/py_text ${helperV1.hash}`);
    expect(first.lock).toContain(`# workspace-import f/common/py_greet ${(await version('f/common/py_greet')).hash}`);
    expect(await runSync(s, 'u/admin/py_importer', { name: 'ada' })).toEqual({ status: 200, body: ['hello ADA (v1)', 'X (v1)'] });

    // The helper gets a new version: the importer's jobs keep the one it pinned.
    expect((await create('f/common/py_text', 'python3', 'def shout(s):\n    return s.upper() + " (v2)"\n')).status).toBe(201);
    expect(await runSync(s, 'u/admin/py_importer', { name: 'ada' })).toEqual({ status: 200, body: ['hello ADA (v1)', 'X (v1)'] });

    // A new version of the importer picks the new helper up, and its lock says so.
    expect((await create('u/admin/py_importer', 'python3', importer)).status).toBe(201);
    expect((await version('u/admin/py_importer')).lock).toContain(`# workspace-import f/common/py_text ${(await version('f/common/py_text')).hash}`);
    expect(await runSync(s, 'u/admin/py_importer', { name: 'ada' })).toEqual({ status: 200, body: ['hello ADA (v2)', 'X (v2)'] });
  });

  it('TypeScript: "/f/folder/name.ts" and relative paths, pinned the same way', async () => {
    expect((await create('f/common/ts_text', 'bun', 'export function shout(s: string): string { return s.toUpperCase() + " (v1)"; }\n')).status).toBe(201);
    expect((await create('f/common/ts_greet', 'bun', 'import { shout } from "./ts_text.ts";\nexport const greet = (name: string) => `hello ${shout(name)}`;\n')).status).toBe(201);
    const importer = 'import { greet } from "../../f/common/ts_greet.ts";\nimport * as text from "/f/common/ts_text.ts";\nexport function main(name: string) { return [greet(name), text.shout("x")]; }\n';
    expect((await create('u/admin/ts_importer', 'bun', importer)).status).toBe(201);
    expect((await version('u/admin/ts_importer')).lock).toContain(`# workspace-import f/common/ts_text ${(await version('f/common/ts_text')).hash}`);
    expect(await runSync(s, 'u/admin/ts_importer', { name: 'ada' })).toEqual({ status: 200, body: ['hello ADA (v1)', 'X (v1)'] });

    expect((await create('f/common/ts_text', 'bun', 'export function shout(s: string): string { return s.toUpperCase() + " (v2)"; }\n')).status).toBe(201);
    expect(await runSync(s, 'u/admin/ts_importer', { name: 'ada' })).toEqual({ status: 200, body: ['hello ADA (v1)', 'X (v1)'] });
    expect((await create('u/admin/ts_importer', 'bun', importer)).status).toBe(201);
    expect(await runSync(s, 'u/admin/ts_importer', { name: 'ada' })).toEqual({ status: 200, body: ['hello ADA (v2)', 'X (v2)'] });
  });

  it('the imported files are read-only to the job', async () => {
    expect((await create('f/common/py_const', 'python3', 'VALUE = 1\n')).status).toBe(201);
    const content = 'import f.common.py_const\n\ndef main():\n    path = f.common.py_const.__file__\n    try:\n        open(path, "a").write("VALUE = 2\\n")\n        return "written"\n    except OSError as e:\n        return type(e).__name__\n';
    expect((await create('u/admin/py_writer', 'python3', content)).status).toBe(201);
    const run = await runSync(s, 'u/admin/py_writer');
    expect(run.status).toBe(200);
    expect(['PermissionError', 'OSError']).toContain(run.body);
  });

  it('refuses an import the creator may not read, or that does not exist, naming it; nothing is created', async () => {
    expect((await create('f/private/secret_helper', 'python3', 'def key():\n    return "s3cr3t"\n')).status).toBe(201);
    const unreadable = await create('u/alice/sneaky', 'python3', 'from f.private.secret_helper import key\n\ndef main():\n    return key()\n', alice);
    expect(unreadable.status).toBe(400);
    expect(unreadable.body.error.message).toContain('f/private/secret_helper');
    // alice cannot tell it apart from one that does not exist.
    const missing = await create('u/alice/sneaky', 'bun', 'import { x } from "/f/common/nothing_here.ts";\nexport function main() { return x; }\n', alice);
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('f/common/nothing_here');
    expect(unreadable.body.error.message.replaceAll('f/private/secret_helper', 'X')).toBe(missing.body.error.message.replaceAll('f/common/nothing_here', 'X'));
    expect((await s.fetch(`${ws()}/scripts/get/p/u/alice/sneaky`, { token: alice })).status).toBe(404);
    // A folder alice may read is fine.
    expect((await create('u/alice/friendly', 'python3', 'from f.common.py_text import shout\n\ndef main():\n    return shout("a")\n', alice)).status).toBe(201);
  });

  it('keeps a script of shared code without main, as Windmill does; running it says it has none', async () => {
    // The helpers above have no main either. Running one fails the job, naming what is missing.
    expect(await runSync(s, 'f/common/py_text')).toMatchObject({ status: 200, body: { error: { name: 'TypeError', message: expect.stringContaining('main') } } });
    expect(await runSync(s, 'f/common/ts_text')).toMatchObject({ status: 200, body: { error: { name: 'TypeError', message: expect.stringContaining('main') } } });
    // A language no script imports still needs its main.
    const deno = await create('u/admin/deno_no_main', 'deno', 'export const x = 1;\n');
    expect(deno.status).toBe(400);
    expect(deno.body.error.message).toContain('no main function found');
  });

  it('fails a job whose pinned import was deleted since, naming it', async () => {
    expect((await create('f/common/doomed', 'bun', 'export const word = "still here";\n')).status).toBe(201);
    expect((await create('u/admin/uses_doomed', 'bun', 'import { word } from "/f/common/doomed.ts";\nexport function main() { return word; }\n')).status).toBe(201);
    expect(await runSync(s, 'u/admin/uses_doomed')).toEqual({ status: 200, body: 'still here' });
    expect((await s.fetch(`${ws()}/scripts/delete/p/f/common/doomed`, { method: 'POST' })).status).toBe(200);
    const run = await runSync(s, 'u/admin/uses_doomed');
    // The sync endpoint answers a failed job with its error (spec 8).
    expect(run.body.error.name).toBe('WorkspaceImportMissing');
    expect(run.body.error.message).toContain('f/common/doomed');
  });

  it('refuses an import of another language, a path outside the workspace and a cycle back to the script', async () => {
    const otherLanguage = await create('u/admin/mixed', 'bun', 'import { shout } from "/f/common/py_text.ts";\nexport function main() { return shout("a"); }\n');
    expect(otherLanguage.status).toBe(400);
    expect(otherLanguage.body.error.message).toContain('f/common/py_text is a python3 script');
    const outside = await create('u/admin/climber', 'bun', 'import { x } from "../../../../etc/passwd.ts";\nexport function main() { return x; }\n');
    expect(outside.status).toBe(400);
    expect(outside.body.error.message).toContain('../../../../etc/passwd.ts');
    expect((await create('f/common/ping', 'python3', 'def ping():\n    return "ping"\n')).status).toBe(201);
    expect((await create('f/common/pong', 'python3', 'from f.common.ping import ping\n\ndef pong():\n    return ping()\n')).status).toBe(201);
    const cycle = await create('f/common/ping', 'python3', 'from f.common.pong import pong\n\ndef ping():\n    return "ping"\n');
    expect(cycle.status).toBe(400);
    expect(cycle.body.error.message).toContain('f/common/pong');
  });
});
