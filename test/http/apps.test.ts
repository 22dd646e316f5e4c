import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

/**
 * Apps as a stored, versioned kind (issue 20): the JSON an app builder produces, saved, read back,
 * listed, versioned and deleted, with rights following the path like scripts and flows.
 */

let s: TestServer;
let dev: string;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown, token?: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(token ? { token } : {}) });

beforeAll(async () => {
  s = await startServer();
  expect((await s.post('/api/users/create', { username: 'dev', email: 'dev@example.com', password: 'dev-password-1' })).status).toBe(201);
  expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'dev', role: 'developer' })).status).toBe(201);
  // A token of dev's own, made by dev: the admin creates none for others.
  const login = await s.fetch('/api/auth/login', { ...json({ email: 'dev@example.com', password: 'dev-password-1' }), token: null });
  const cookie = login.headers.get('set-cookie')!.split(';')[0];
  dev = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'dev' }), token: null, headers: { cookie, 'content-type': 'application/json', origin: s.url } })).text();
});
afterAll(async () => {
  await s?.stop();
});

describe('apps', () => {
  const definition = { grid: [{ id: 'a', data: { type: 'textcomponent', text: 'hello' } }], hiddenInlineScripts: [] };

  it('are created, read back as given, updated into new versions, listed and deleted', async () => {
    const created = await s.fetch(`${ws()}/apps/create`, json({ path: 'u/admin/dash', summary: 'Dashboard', value: definition, policy: { execution_mode: 'viewer' } }));
    expect(created.status, await created.clone().text()).toBe(201);
    expect(await created.text()).toBe('u/admin/dash');
    const first = await (await s.fetch(`${ws()}/apps/get/p/u/admin/dash`)).json();
    expect(first).toMatchObject({ path: 'u/admin/dash', summary: 'Dashboard', value: definition, policy: { execution_mode: 'viewer' }, created_by: 'admin' });

    const changed = { ...definition, grid: [] };
    const updated = await s.fetch(`${ws()}/apps/update/u/admin/dash`, json({ value: changed }));
    expect(updated.status, await updated.clone().text()).toBe(200);
    const second = await updated.json();
    expect(second.id).toBeGreaterThan(first.id);
    expect(second).toMatchObject({ summary: 'Dashboard', value: changed, policy: { execution_mode: 'viewer' } });
    expect((await (await s.fetch(`${ws()}/apps/history/p/u/admin/dash`)).json()).map((v: any) => v.id)).toEqual([second.id, first.id]);
    // An earlier version stays readable by its id.
    expect((await (await s.fetch(`${ws()}/apps/get/v/${first.id}`)).json()).value).toEqual(definition);
    expect(await (await s.fetch(`${ws()}/apps/list`)).json()).toEqual([{ path: 'u/admin/dash', version: second.id }]);

    expect((await s.fetch(`${ws()}/apps/delete/u/admin/dash`, { method: 'DELETE' })).status).toBe(200);
    expect((await s.fetch(`${ws()}/apps/get/p/u/admin/dash`)).status).toBe(404);
    expect((await s.fetch(`${ws()}/apps/delete/u/admin/dash`, { method: 'DELETE' })).status).toBe(404);
  });

  it('refuses bad input with 400 and a taken path with 409, storing nothing', async () => {
    for (const body of [{ path: 'u/admin/x' }, { path: 'u/admin/x', value: [] }, { path: 'no-prefix', value: {} }, { path: 'u/admin/x', value: {}, summary: 7 }]) {
      expect((await s.fetch(`${ws()}/apps/create`, json(body))).status, JSON.stringify(body)).toBe(400);
    }
    expect((await s.fetch(`${ws()}/apps/create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' })).status).toBe(400);
    expect((await s.fetch(`${ws()}/apps/get/v/abc`)).status).toBe(400);
    expect((await s.fetch(`${ws()}/apps/create`, json({ path: 'u/admin/once', value: {} }))).status).toBe(201);
    expect((await s.fetch(`${ws()}/apps/create`, json({ path: 'u/admin/once', value: {} }))).status).toBe(409);
    expect((await (await s.fetch(`${ws()}/apps/list`)).json()).map((a: any) => a.path)).toEqual(['u/admin/once']);
  });

  it('refuses an update whose body names another path with 400, rather than saving it at its own and dropping that', async () => {
    expect((await s.fetch(`${ws()}/apps/create`, json({ path: 'u/admin/stays', value: { v: 1 } }))).status).toBe(201);
    const moved = await s.fetch(`${ws()}/apps/update/u/admin/stays`, json({ path: 'u/admin/elsewhere', value: { v: 2 } }));
    expect(moved.status, await moved.clone().text()).toBe(400);
    expect((await moved.json()).error.field).toBe('path');
    expect((await (await s.fetch(`${ws()}/apps/get/p/u/admin/stays`)).json()).value).toEqual({ v: 1 });
    expect((await s.fetch(`${ws()}/apps/get/p/u/admin/elsewhere`)).status).toBe(404);
    // Its own path, as Windmill's clients repeat it, is taken.
    const same = await s.fetch(`${ws()}/apps/update/u/admin/stays`, json({ path: 'u/admin/stays', value: { v: 3 } }));
    expect(same.status, await same.clone().text()).toBe(200);
    expect((await same.json()).value).toEqual({ v: 3 });
  });

  it('follow folder permissions: a developer writes where the folder lets them, and sees only what they may read', async () => {
    expect((await s.fetch(`${ws()}/folders/create`, json({ name: 'team', extra_perms: { 'u/dev': true } }))).status).toBe(201);
    expect((await s.fetch(`${ws()}/folders/create`, json({ name: 'closed' }))).status).toBe(201);
    expect((await s.fetch(`${ws()}/apps/create`, json({ path: 'f/closed/secret_app', value: {} }))).status).toBe(201);

    expect((await s.fetch(`${ws()}/apps/create`, json({ path: 'f/team/shared', value: {} }, dev))).status).toBe(201);
    expect((await s.fetch(`${ws()}/apps/create`, json({ path: 'f/closed/mine', value: {} }, dev))).status).toBe(403);
    expect((await s.fetch(`${ws()}/apps/update/f/closed/secret_app`, json({ value: { x: 1 } }, dev))).status).toBe(403);
    expect((await s.fetch(`${ws()}/apps/get/p/f/closed/secret_app`, { token: dev })).status).toBe(403);
    const visible = (await (await s.fetch(`${ws()}/apps/list`, { token: dev })).json()).map((a: any) => a.path);
    expect(visible).toContain('f/team/shared');
    expect(visible).not.toContain('f/closed/secret_app');
  });
});
