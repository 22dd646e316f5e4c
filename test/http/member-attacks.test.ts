import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * A hostile member of the workspace (a developer without admin rights) going after what others
 * keep there, by ways the rights on paths do not see at first glance.
 */

let s: TestServer;
let mallory: string;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

beforeAll(async () => {
  s = await startServer();
  expect((await s.post('/api/users/create', { username: 'mallory', email: 'mallory@example.com', password: 'mallory-password' })).status).toBe(201);
  expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'mallory', role: 'developer' })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { ...json({ email: 'mallory@example.com', password: 'mallory-password' }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const res = await s.fetch('/api/users/tokens/create', { ...json({ label: 'mallory' }), token: null, headers: { cookie, 'content-type': 'application/json' } });
  expect(res.status).toBe(201);
  mallory = await res.text();
});
afterAll(() => s?.stop());

describe('a folder deleted with items still in it', () => {
  it('is refused, so a developer who creates a folder of the same name next does not own what it held', async () => {
    expect((await s.post(`${ws()}/folders/create`, { name: 'vault' })).status).toBe(201);
    expect((await s.post(`${ws()}/variables/create`, { path: 'f/vault/db_password', value: 'hunter2-vault', is_secret: true })).status).toBe(201);
    await createScript(s, 'f/vault/rotate', 'bun', 'export function main() { return "rotated"; }');

    // Before: the folder went, its items stayed, and the next folder of that name took them over.
    const del = await s.fetch(`${ws()}/folders/delete/vault`, { method: 'DELETE' });
    expect(del.status).toBe(409);
    const error = (await del.json()).error;
    expect(error.code).toBe('conflict');
    expect(error.message).toContain('f/vault/db_password');
    expect(error.message).toContain('f/vault/rotate');
    // Nothing changed: the folder is still there, and still not mallory's to take.
    expect((await s.fetch(`${ws()}/folders/get/vault`)).status).toBe(200);
    expect((await s.fetch(`${ws()}/folders/create`, { ...json({ name: 'vault' }), token: mallory })).status).toBe(403);
    expect((await s.fetch(`${ws()}/variables/get_value/f/vault/db_password`, { token: mallory })).status).toBe(403);

    // Emptied, it may go; a folder created under the name then holds nothing of the old one.
    expect((await s.fetch(`${ws()}/variables/delete/f/vault/db_password`, { method: 'DELETE' })).status).toBe(200);
    expect((await s.post(`${ws()}/scripts/delete/p/f/vault/rotate`, {})).status).toBe(200);
    expect((await s.fetch(`${ws()}/folders/delete/vault`, { method: 'DELETE' })).status).toBe(200);
    expect((await s.fetch(`${ws()}/folders/create`, { ...json({ name: 'vault' }), token: mallory })).status).toBe(201);
    expect((await s.fetch(`${ws()}/variables/get_value/f/vault/db_password`, { token: mallory })).status).toBe(404);
  });

  it('answers a folder that does not exist as before, whatever paths under its name hold', async () => {
    const res = await s.fetch(`${ws()}/folders/delete/nowhere`, { method: 'DELETE', token: mallory });
    expect(res.status).toBe(404);
  });
});
