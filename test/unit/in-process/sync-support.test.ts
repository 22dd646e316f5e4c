import { beforeAll, describe, expect, it } from 'vitest';
import { createScript, inProcessService, json, type InProcessService } from './harness.js';

/**
 * What the svc CLI needs from the API (issue 6), in-process: the workspace sync key and secrets
 * sealed with it, deployment messages and locks on the versions a push creates.
 * test/http/sync-support.test.ts runs the same over real HTTP in both shells.
 */

let s: InProcessService;
beforeAll(async () => {
  s = await inProcessService();
});

const ws = '/api/w/main';

async function developerToken(username: string): Promise<string> {
  const password = `${username}-password`;
  expect((await s.post('/api/users/create', { username, email: `${username}@example.com`, password })).status).toBe(201);
  expect((await s.post(`${ws}/workspaces/add_user`, { username, role: 'developer' })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { ...json({ email: username, password }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const res = await s.fetch('/api/users/tokens/create', { ...json({ label: 'sync' }), token: null, headers: { cookie, 'content-type': 'application/json' } });
  expect(res.status).toBe(201);
  return res.text();
}

describe('workspace sync key', () => {
  it('is one stable key per workspace, readable and replaceable by admins only', async () => {
    const first = await (await s.fetch(`${ws}/workspaces/encryption_key`)).json();
    expect(first.key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await (await s.fetch(`${ws}/workspaces/encryption_key`)).json()).toEqual(first);

    const dev = await developerToken('syncdev');
    expect((await s.fetch(`${ws}/workspaces/encryption_key`, { token: dev })).status).toBe(403);
    expect((await s.fetch(`${ws}/workspaces/encryption_key`, { ...json({ key: first.key }), token: dev })).status).toBe(403);
    expect((await s.post(`${ws}/workspaces/encryption_key`, { key: 'short' })).status).toBe(400);
  });

  it('seals a secret deterministically for its path, and takes it back sealed', async () => {
    expect((await s.post(`${ws}/variables/create`, { path: 'u/admin/sealed', value: 'p@ss', is_secret: true })).status).toBe(201);
    const a = await (await s.fetch(`${ws}/variables/get/u/admin/sealed?encrypted=true`)).json();
    const b = await (await s.fetch(`${ws}/variables/get/u/admin/sealed?encrypted=true`)).json();
    expect(a.value).toMatch(/^svc-sync:v1:/);
    expect(a.value).not.toContain('p@ss');
    expect(b.value).toBe(a.value);

    // The sealed value creates a copy elsewhere only at its own path.
    const moved = await s.post(`${ws}/variables/create`, { path: 'u/admin/moved', value: a.value, is_secret: true, encrypted: true });
    expect(moved.status).toBe(400);
    expect((await moved.json()).error.message).toContain('not encrypted for u/admin/moved');
    expect((await s.fetch(`${ws}/variables/delete/u/admin/sealed`, { method: 'DELETE' })).status).toBe(200);
    expect((await s.post(`${ws}/variables/create`, { path: 'u/admin/sealed', value: a.value, is_secret: true, encrypted: true })).status).toBe(201);
    expect((await (await s.fetch(`${ws}/variables/get/u/admin/sealed`)).json()).value).toBe('p@ss');

    // Replacing the key: what was sealed with the old one no longer opens.
    const other = Buffer.alloc(32, 7).toString('base64url');
    expect((await s.post(`${ws}/workspaces/encryption_key`, { key: other })).status).toBe(200);
    expect((await (await s.fetch(`${ws}/workspaces/encryption_key`)).json()).key).toBe(other);
    expect((await s.post(`${ws}/variables/update/u/admin/sealed`, { value: a.value, encrypted: true })).status).toBe(400);
    const resealed = await (await s.fetch(`${ws}/variables/get/u/admin/sealed?encrypted=true`)).json();
    expect(resealed.value).not.toBe(a.value);
    expect((await s.post(`${ws}/variables/update/u/admin/sealed`, { value: resealed.value, encrypted: true })).status).toBe(200);
  });
});

describe('versions made by a push', () => {
  it('records deployment_message and lock on script versions and deployment_message on flow versions', async () => {
    const hash = await createScript(s, 'u/admin/deployed', 'export function main() { return 1 }', { deployment_message: 'release 7', lock: 'requests==2.32.0\n' });
    const script = await (await s.fetch(`${ws}/scripts/get/h/${hash}`)).json();
    expect(script).toMatchObject({ deployment_message: 'release 7', lock: 'requests==2.32.0\n' });
    const listed = (await (await s.fetch(`${ws}/scripts/list`)).json()) as { path: string; lock?: string }[];
    expect(listed.find((x) => x.path === 'u/admin/deployed')?.lock).toBe('requests==2.32.0\n');

    const flow = { value: { modules: [{ id: 'a', value: { type: 'identity' } }] } };
    expect((await s.post(`${ws}/flows/create`, { path: 'u/admin/deployed_flow', ...flow, deployment_message: 'first' })).status).toBe(201);
    expect((await s.post(`${ws}/flows/update/u/admin/deployed_flow`, { ...flow })).status).toBe(200);
    const history = (await (await s.fetch(`${ws}/flows/history/p/u/admin/deployed_flow`)).json()) as { deployment_message?: string }[];
    expect(history.map((h) => h.deployment_message)).toEqual([undefined, 'first']);
  });
});
