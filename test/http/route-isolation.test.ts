import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

/**
 * Attack (issue 30): HTTP routes of one workspace must not shadow, collide with or reveal the
 * routes of another. Routes are served at `/api/r/{workspace}/<route_path>` (or under a prefix an
 * instance admin assigned to the workspace), and only that workspace's routes answer there.
 */

let s: TestServer;
const A = 'tenant-a';
const B = 'tenant-b';
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function script(ws: string, path: string, content: string): Promise<void> {
  const res = await s.post(`/api/w/${ws}/scripts/create`, { path, language: 'bun', content });
  expect(res.status, await res.clone().text()).toBe(201);
}
const route = (ws: string, body: Record<string, unknown>) => s.post(`/api/w/${ws}/http_triggers/create`, { http_method: 'post', authentication_method: 'none', ...body });
const call = (url: string, body: unknown = {}) => s.fetch(url, { ...json(body), token: null });

/** A member of `ws` with `role` (not an instance admin), and their token. */
async function memberToken(ws: string, username: string, role: string): Promise<string> {
  expect((await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` })).status).toBe(201);
  expect((await s.post(`/api/w/${ws}/workspaces/add_user`, { username, role })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const res = await s.fetch('/api/users/tokens/create', { ...json({ label: username }), token: null, headers: { cookie, 'content-type': 'application/json' } });
  expect(res.status).toBe(201);
  return res.text();
}

beforeAll(async () => {
  s = await startServer();
  for (const id of [A, B]) expect((await s.post('/api/workspaces/create', { id, name: id })).status).toBe(201);
  await script(A, 'f/a_secret_project/steal', 'export function main(x = 0, y = 0) { return { taken_by: "a", x, y }; }');
  await script(B, 'f/orders/take', 'export function main(id: string, card: string) { return { served_by: "b", id, card }; }');
});
afterAll(() => s?.stop());

describe('routes belong to their workspace', () => {
  it("a static route of workspace A never receives the callers of B's parameter route", async () => {
    expect((await route(B, { path: 'f/orders/order_route', route_path: 'orders/:id', script_path: 'f/orders/take' })).status).toBe(201);
    const planted = await route(A, { path: 'f/a_secret_project/shadow', route_path: 'orders/42', script_path: 'f/a_secret_project/steal' });
    expect(planted.status, await planted.clone().text()).toBe(201);

    const res = await call(`/api/r/${B}/orders/42`, { card: '4242' });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual({ served_by: 'b', id: '42', card: '4242' });
    // A's route answers at A's URL only.
    expect(await (await call(`/api/r/${A}/orders/42`, { x: 1 })).json()).toEqual({ taken_by: 'a', x: 1, y: 0 });
    expect((await call(`/api/r/${A}/orders/43`)).status).toBe(404);
  });

  it("a route of B with the same method and shape as one of A is no conflict, and B's errors name nothing of A", async () => {
    expect((await route(A, { path: 'f/a_secret_project/plans', route_path: 'launch-plans/:id', script_path: 'f/a_secret_project/steal' })).status).toBe(201);
    const same = await route(B, { path: 'f/orders/plans', route_path: 'launch-plans/:plan', script_path: 'f/orders/take' });
    expect(same.status, await same.clone().text()).toBe(201);
    // A collision inside B is still a 409, naming B's own route only.
    const clash = await route(B, { path: 'f/orders/plans_again', route_path: 'launch-plans/:x', script_path: 'f/orders/take' });
    expect(clash.status).toBe(409);
    const message = (await clash.json()).error.message as string;
    expect(message).toContain('f/orders/plans');
    expect(message).not.toContain(A);
    expect(message).not.toContain('a_secret_project');
  });

  it("answers a route that is not in the named workspace exactly as one that exists nowhere", async () => {
    const bodyOf = async (url: string) => {
      const res = await call(url);
      return { status: res.status, error: (await res.json()).error.code };
    };
    const existsInA = await call(`/api/r/${B}/launch-plans/1/extra`);
    const nowhere = await call(`/api/r/${B}/nothing-anywhere/1/extra`);
    expect(existsInA.status).toBe(404);
    expect(nowhere.status).toBe(404);
    // The message repeats the request and nothing else.
    expect((await existsInA.json()).error.message).not.toMatch(/tenant-a|a_secret_project/);
    expect(await bodyOf(`/api/r/no-such-workspace/orders/42`)).toEqual(await bodyOf(`/api/r/${B}/no-such-route`));
    // The old, unscoped URL reaches nobody's route.
    expect((await call('/api/r/orders/42')).status).toBe(404);
  });
});

describe('a custom route prefix, assigned by an instance admin', () => {
  it('serves the workspace routes under the prefix as well; only an instance admin may assign it', async () => {
    const bAdmin = await memberToken(B, 'b_admin', 'admin');
    const byWorkspaceAdmin = await s.fetch(`/api/w/${B}/workspaces/route_prefix`, { ...json({ prefix: 'shop' }), token: bAdmin, headers: { 'content-type': 'application/json' } });
    expect(byWorkspaceAdmin.status).toBe(403);

    const set = await s.post(`/api/w/${B}/workspaces/route_prefix`, { prefix: 'shop' });
    expect(set.status, await set.clone().text()).toBe(200);
    expect(await set.json()).toEqual({ prefix: 'shop', route_base: '/api/r/shop' });
    expect(await (await s.fetch(`/api/w/${B}/workspaces/route_prefix`, { token: bAdmin })).json()).toEqual({ prefix: 'shop', route_base: '/api/r/shop' });

    expect(await (await call('/api/r/shop/orders/7', { card: '1' })).json()).toEqual({ served_by: 'b', id: '7', card: '1' });
    expect((await call(`/api/r/${B}/orders/7`, { card: '1' })).status).toBe(200);

    // A prefix is one URL segment that no workspace id or other prefix already names.
    expect((await s.post(`/api/w/${A}/workspaces/route_prefix`, { prefix: 'shop' })).status).toBe(409);
    expect((await s.post(`/api/w/${A}/workspaces/route_prefix`, { prefix: B })).status).toBe(409);
    expect((await s.post(`/api/w/${A}/workspaces/route_prefix`, { prefix: '../x' })).status).toBe(400);
    expect((await s.post('/api/workspaces/create', { id: 'shop', name: 'squatter' })).status).toBe(409);

    // Moving the prefix frees the old one; null removes it.
    expect((await s.post(`/api/w/${B}/workspaces/route_prefix`, { prefix: 'store' })).status).toBe(200);
    expect((await call('/api/r/shop/orders/7', { card: '1' })).status).toBe(404);
    expect((await call('/api/r/store/orders/7', { card: '1' })).status).toBe(200);
    expect((await s.post(`/api/w/${A}/workspaces/route_prefix`, { prefix: 'shop' })).status).toBe(200);
    expect(await (await call('/api/r/shop/orders/42', { y: 2 })).json()).toEqual({ taken_by: 'a', x: 0, y: 2 });
    expect((await s.post(`/api/w/${B}/workspaces/route_prefix`, { prefix: null })).status).toBe(200);
    expect((await call('/api/r/store/orders/7', { card: '1' })).status).toBe(404);
  });
});
