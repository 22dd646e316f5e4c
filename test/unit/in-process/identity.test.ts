import { beforeAll, describe, expect, it } from 'vitest';
import { createScript, inProcessService, json, type InProcessService } from './harness.js';

/**
 * Users, roles, folders, groups, sessions and tokens in-process (spec 2.8, 5): the permission and
 * token rules through app.request(), expiry by the service's clock. test/http/identity.test.ts
 * runs the same over real HTTP in both shells.
 */

let s: InProcessService;
beforeAll(async () => {
  s = await inProcessService();
});

const ws = '/api/w/main';

/** Creates a user with a password, adds them to the workspace and returns an API token of theirs. */
async function aMember(username: string, role: 'admin' | 'developer' | 'operator'): Promise<string> {
  expect((await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` })).status).toBe(201);
  expect((await s.post(`${ws}/workspaces/add_user`, { username, role })).status).toBe(201);
  const session = await login(`${username}@example.com`, `${username}-password`);
  const res = await s.fetch('/api/users/tokens/create', { ...json({ label: `${username}'s token` }), token: null, headers: { cookie: session, 'content-type': 'application/json' } });
  expect(res.status).toBe(201);
  return res.text();
}

/** Logs in and returns the Cookie header value of the session. */
async function login(email: string, password: string): Promise<string> {
  const res = await s.fetch('/api/auth/login', { ...json({ email, password }), token: null });
  expect(res.status).toBe(200);
  const cookie = res.headers.get('set-cookie') ?? '';
  expect(cookie).toMatch(/HttpOnly/i);
  expect(cookie).toMatch(/SameSite=Strict/i);
  return cookie.split(';')[0];
}

describe('users and sessions', () => {
  it('logs a user in with a password into a cookie session, and out again', async () => {
    await s.post('/api/users/create', { username: 'carol', email: 'carol@example.com', password: 'correct horse' });
    const cookie = await login('carol@example.com', 'correct horse');
    const me = await s.fetch('/api/users/whoami', { token: null, headers: { cookie } });
    expect(me.status).toBe(200);
    const body = await me.json();
    expect(body).toMatchObject({ username: 'carol', email: 'carol@example.com', is_admin: false });
    expect(JSON.stringify(body)).not.toContain('scrypt');

    // Same answer for a wrong password and an unknown user.
    for (const attempt of [{ email: 'carol@example.com', password: 'wrong horse' }, { email: 'nobody@example.com', password: 'whatever!' }]) {
      const bad = await s.fetch('/api/auth/login', { ...json(attempt), token: null });
      expect(bad.status).toBe(401);
      expect((await bad.json()).error.message).toBe('wrong email or password');
    }

    expect((await s.fetch('/api/auth/logout', { method: 'POST', token: null, headers: { cookie } })).status).toBe(200);
    expect((await s.fetch('/api/users/whoami', { token: null, headers: { cookie } })).status).toBe(401);
    // The console's Log out button with a session that already ended: still to the login page, the cookie cleared.
    const again = await s.fetch('/api/auth/logout', { method: 'POST', token: null, redirect: 'manual', headers: { cookie, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate' } });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('/login');
    expect(again.headers.get('set-cookie')).toMatch(/svc_session=;/);
  });

  it('ends every other session of a user whose password changes, and keeps the one that changed it', async () => {
    // Attack: a session cookie stolen (or a browser left signed in elsewhere) outlives the victim's
    // password change, the one thing a person does to take their account back.
    await s.post('/api/users/create', { username: 'pat', email: 'pat@example.com', password: 'old password' });
    const stolen = await login('pat@example.com', 'old password');
    const own = await login('pat@example.com', 'old password');
    const headers = { cookie: own, 'content-type': 'application/json' };
    const token = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'laptop' }), token: null, headers })).text();
    const changed = await s.fetch('/api/users/setpassword', { ...json({ password: 'new password', current_password: 'old password' }), token: null, headers: { ...headers, 'sec-fetch-site': 'same-origin' } });
    expect(changed.status).toBe(200);
    expect((await s.fetch('/api/users/whoami', { token: null, headers: { cookie: stolen } })).status).toBe(401);
    expect((await s.fetch('/api/users/whoami', { token: null, headers: { cookie: own } })).status).toBe(200);
    // API tokens are the user's own, made on purpose and deleted one by one: they stay.
    expect((await s.fetch('/api/users/whoami', { token })).status).toBe(200);
    // A change made with a token ends every session.
    const again = await login('pat@example.com', 'new password');
    expect((await s.fetch('/api/users/setpassword', { ...json({ password: 'newer password', current_password: 'new password' }), token })).status).toBe(200);
    expect((await s.fetch('/api/users/whoami', { token: null, headers: { cookie: again } })).status).toBe(401);
    expect((await s.fetch('/api/users/whoami', { token: null, headers: { cookie: own } })).status).toBe(401);
  });

  it('changes a password only for someone who knows it, counting wrong guesses like logins', async () => {
    // Attack: whoever holds a session for a moment (a browser left open, a stolen cookie) sets a
    // password of their own and, since a change ends the other sessions, keeps the account.
    await s.post('/api/users/create', { username: 'quinn', email: 'quinn@example.com', password: 'quinn password' });
    const cookie = await login('quinn@example.com', 'quinn password');
    const change = (body: object) => s.fetch('/api/users/setpassword', { ...json(body), token: null, headers: { cookie, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' } });
    const missing = await change({ password: 'taken over' });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error.field).toBe('current_password');
    const wrong = await change({ password: 'taken over', current_password: 'a guess' });
    expect(wrong.status).toBe(403);
    expect((await wrong.json()).error.code).toBe('invalid_credentials');
    // Nothing changed: the old password still logs in, and the session is still there.
    await login('quinn@example.com', 'quinn password');
    expect((await s.fetch('/api/users/whoami', { token: null, headers: { cookie } })).status).toBe(200);
    // The held session is no way around the login limit: the account locks, for this form too.
    for (let i = 0; i < 20; i++) expect((await change({ password: 'taken over', current_password: `guess ${i}` })).status).toBe(403);
    expect((await change({ password: 'taken over', current_password: 'quinn password' })).status).toBe(429);
    expect((await s.fetch('/api/auth/login', { ...json({ email: 'quinn', password: 'quinn password' }), token: null })).status).toBe(429);
    s.clock.advance(16 * 60_000);
    expect((await change({ password: 'quinn password 2', current_password: 'quinn password' })).status).toBe(200);
    // The bootstrap admin has no password yet: it sets one without.
    expect((await s.post('/api/users/setpassword', { password: 'admin password' })).status).toBe(200);
    expect((await s.post('/api/users/setpassword', { password: 'admin password 2' })).status).toBe(400);
  });

  it('marks the session cookie Secure when the browser came by https through a proxy that ends TLS', async () => {
    // Attack: behind such a proxy the request arrives as http, and the cookie lacked Secure: one
    // http:// request to the host (a link, a downgrade) carried the session in clear.
    const res = await s.fetch('/api/auth/login', { ...json({ email: 'carol@example.com', password: 'correct horse' }), token: null, headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toMatch(/;\s*Secure/i);
    const plain = await s.fetch('/api/auth/login', { ...json({ email: 'carol@example.com', password: 'correct horse' }), token: null });
    expect(plain.headers.get('set-cookie')).not.toMatch(/;\s*Secure/i);
  });

  it('lets only an instance admin create users, and refuses bad user input', async () => {
    const carol = await login('carol@example.com', 'correct horse');
    const asCarol = await s.fetch('/api/users/create', { ...json({ username: 'mallory', email: 'm@example.com', password: 'password1' }), token: null, headers: { cookie: carol, 'content-type': 'application/json' } });
    expect(asCarol.status).toBe(403);
    expect((await s.post('/api/users/create', { username: 'carol', email: 'other@example.com', password: 'password1' })).status).toBe(409);
    const short = await s.post('/api/users/create', { username: 'dave', email: 'dave@example.com', password: 'short' });
    expect(short.status).toBe(400);
    expect((await short.json()).error.field).toBe('password');
    const badEmail = await s.post('/api/users/create', { username: 'dave', email: 'not-an-email', password: 'long enough' });
    expect((await badEmail.json()).error.field).toBe('email');
    const notJson = await s.fetch('/api/auth/login', { method: 'POST', token: null, body: 'email=a&password=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(notJson.status).toBe(415);
  });
});

describe('roles, folders and groups', () => {
  let dev: string;
  let operator: string;
  let outsider: string;
  beforeAll(async () => {
    dev = await aMember('dev1', 'developer');
    operator = await aMember('op1', 'operator');
    await s.post('/api/users/create', { username: 'outsider', email: 'outsider@example.com', password: 'outsider-password' });
    const cookie = await login('outsider@example.com', 'outsider-password');
    outsider = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'x' }), token: null, headers: { cookie, 'content-type': 'application/json' } })).text();
  });

  it('gives each user their own u/<user>/ space and nobody else', async () => {
    const mine = await s.fetch(`${ws}/scripts/create`, { ...json({ path: 'u/dev1/hello', language: 'bun', content: 'export function main() { return "hi" }' }), token: dev });
    expect(mine.status).toBe(201);
    const theirs = await s.fetch(`${ws}/scripts/create`, { ...json({ path: 'u/admin/planted', language: 'bun', content: 'export function main() {}' }), token: dev });
    expect(theirs.status).toBe(403);
    expect((await theirs.json()).error.message).toContain('dev1');
    // The operator may not even see dev1's script, let alone run it.
    expect((await s.fetch(`${ws}/scripts/get/p/u/dev1/hello`, { token: operator })).status).toBe(403);
    expect((await s.fetch(`${ws}/jobs/run_wait_result/p/u/dev1/hello`, { method: 'POST', token: operator })).status).toBe(403);
    const listed = await (await s.fetch(`${ws}/scripts/list`, { token: operator })).json();
    expect(listed.map((x: { path: string }) => x.path)).not.toContain('u/dev1/hello');
    // An admin of the workspace sees and runs everything.
    expect(await (await s.fetch(`${ws}/jobs/run_wait_result/p/u/dev1/hello`, { method: 'POST' })).json()).toBe('hi');
  });

  it('shares f/<folder>/ items by folder rights: owners and writers write, readers read and run', async () => {
    const folder = await s.fetch(`${ws}/folders/create`, { ...json({ name: 'ops', extra_perms: { 'u/op1': false } }), token: dev });
    expect(folder.status).toBe(201);
    expect(await folder.json()).toMatchObject({ name: 'ops', owners: ['u/dev1'], extra_perms: { 'u/op1': false } });
    await createScript(s, 'f/ops/status', 'export function main() { return "green" }');

    // Reader: sees and runs, cannot write.
    expect(await (await s.fetch(`${ws}/jobs/run_wait_result/p/f/ops/status`, { method: 'POST', token: operator })).json()).toBe('green');
    const write = await s.fetch(`${ws}/scripts/create`, { ...json({ path: 'f/ops/op_script', language: 'bun', content: 'export function main() {}' }), token: operator });
    expect(write.status).toBe(403);
    // The operator cannot change the folder's rights either; its owner can.
    expect((await s.fetch(`${ws}/folders/update/ops`, { ...json({ extra_perms: { 'u/op1': true } }), token: operator })).status).toBe(403);
    // A member with no rights on the folder: nothing.
    await aMember('dev2', 'developer').then(async (dev2) => {
      expect((await s.fetch(`${ws}/jobs/run_wait_result/p/f/ops/status`, { method: 'POST', token: dev2 })).status).toBe(403);
      // Through a group the folder's owner grants write access.
      expect((await s.post(`${ws}/groups/create`, { name: 'oncall', summary: 'people on call' })).status).toBe(201);
      expect((await s.post(`${ws}/groups/adduser/oncall`, { username: 'dev2' })).status).toBe(200);
      expect((await s.fetch(`${ws}/folders/update/ops`, { ...json({ extra_perms: { 'u/op1': false, 'g/oncall': true } }), token: dev })).status).toBe(200);
      const byGroup = await s.fetch(`${ws}/scripts/create`, { ...json({ path: 'f/ops/restart', language: 'bun', content: 'export function main() { return "restarted" }' }), token: dev2 });
      expect(byGroup.status).toBe(201);
      // Removed from the group, the right is gone at once.
      await s.post(`${ws}/groups/removeuser/oncall`, { username: 'dev2' });
      expect((await s.fetch(`${ws}/jobs/run_wait_result/p/f/ops/restart`, { method: 'POST', token: dev2 })).status).toBe(403);
    });
  });

  it('keeps groups and membership in the hands of workspace admins', async () => {
    expect((await s.fetch(`${ws}/groups/create`, { ...json({ name: 'devs' }), token: dev })).status).toBe(403);
    expect((await s.fetch(`${ws}/workspaces/add_user`, { ...json({ username: 'outsider', role: 'admin' }), token: dev })).status).toBe(403);
    expect((await s.post(`${ws}/groups/adduser/oncall`, { username: 'outsider' })).status).toBe(400);
    expect((await s.post(`${ws}/workspaces/add_user`, { username: 'dev1', role: 'admin' })).status).toBe(409);
    expect((await s.post(`${ws}/workspaces/add_user`, { username: 'ghost', role: 'developer' })).status).toBe(400);
    const badRole = await s.post(`${ws}/workspaces/add_user`, { username: 'outsider', role: 'king' });
    expect((await badRole.json()).error.field).toBe('role');
    const members = await (await s.fetch(`${ws}/users/list`, { token: operator })).json();
    expect(members).toEqual(expect.arrayContaining([{ username: 'op1', role: 'operator', added_by: 'admin' }]));
  });

  it('refuses a user who is not a member of the workspace', async () => {
    const res = await s.fetch(`${ws}/scripts/list`, { token: outsider });
    expect(res.status).toBe(403);
    expect((await res.json()).error.message).toBe(`outsider is not a member of workspace ${s.workspace}`);
    expect((await s.fetch('/api/workspaces/list', { token: outsider }).then((r) => r.json()))).toEqual([]);
    expect((await s.fetch(`/api/workspaces/create`, { ...json({ id: 'mine', name: 'mine' }), token: outsider })).status).toBe(403);
  });
});

describe('tokens', () => {
  let token: string;
  beforeAll(async () => {
    token = await aMember('tina', 'developer');
  });

  const asTina = (path: string, init: RequestInit = {}) => s.fetch(path, { ...init, token });

  it('shows a token once, lists it by prefix and label only, and deletes it at once', async () => {
    const created = await asTina('/api/users/tokens/create', json({ label: 'ci', scopes: ['scripts:read'] }));
    expect(created.status).toBe(201);
    const value = await created.text();
    expect(value).toMatch(/^svc_[\w-]{40,}$/);
    const listed = await (await asTina('/api/users/tokens/list')).json();
    const entry = listed.find((t: { label: string }) => t.label === 'ci');
    expect(entry).toMatchObject({ token_prefix: value.slice(0, 12), scopes: ['scripts:read'], expiration: null, expired: false, expires_soon: false });
    expect(JSON.stringify(listed)).not.toContain(value);
    expect(listed.every((t: { label: string }) => t.label !== 'session')).toBe(true);

    expect((await s.fetch(`${ws}/scripts/list`, { token: value })).status).toBe(200);
    expect((await asTina(`/api/users/tokens/delete/${entry.token_prefix}`, { method: 'DELETE' })).status).toBe(200);
    expect((await s.fetch(`${ws}/scripts/list`, { token: value })).status).toBe(401);
    expect((await asTina(`/api/users/tokens/delete/${entry.token_prefix}`, { method: 'DELETE' })).status).toBe(404);
  });

  it('refuses an expired token at once, and flags tokens expiring within 30 days', async () => {
    const soon = new Date(s.clock.now().getTime() + 2500).toISOString();
    const value = await (await asTina('/api/users/tokens/create', json({ label: 'short-lived', expiration: soon }))).text();
    expect((await s.fetch(`${ws}/scripts/list`, { token: value })).status).toBe(200);
    const listed = await (await asTina('/api/users/tokens/list')).json();
    expect(listed.find((t: { label: string }) => t.label === 'short-lived')).toMatchObject({ expiration: soon, expires_soon: true });
    s.clock.advance(3000);
    const refused = await s.fetch(`${ws}/scripts/list`, { token: value });
    expect(refused.status).toBe(401);
    expect((await refused.json()).error.message).toBe('the token is unknown or expired');

    const past = await asTina('/api/users/tokens/create', json({ label: 'past', expiration: '2020-01-01T00:00:00Z' }));
    expect(past.status).toBe(400);
    expect((await past.json()).error.field).toBe('expiration');
  });

  it('limits a webhook-specific token (jobs:run:<path>) to running that one script and reading its jobs', async () => {
    await s.fetch(`${ws}/scripts/create`, { ...json({ path: 'u/tina/deploy', language: 'bun', content: 'export function main(env: string) { return "deployed " + env }' }), token });
    await s.fetch(`${ws}/scripts/create`, { ...json({ path: 'u/tina/other', language: 'bun', content: 'export function main() { return "other" }' }), token });
    const hook = await (await asTina('/api/users/tokens/create', json({ label: 'deploy hook', scopes: ['jobs:run:u/tina/deploy'] }))).text();

    const sync = await s.fetch(`${ws}/jobs/run_wait_result/p/u/tina/deploy`, { ...json({ env: 'prod' }), token: hook });
    expect(await sync.json()).toBe('deployed prod');
    const id = await (await s.fetch(`${ws}/jobs/run/p/u/tina/deploy`, { ...json({ env: 'dev' }), token: hook })).text();
    expect((await s.fetch(`${ws}/jobs_u/get/${id}`, { token: hook })).status).toBe(200);
    // The job acted as tina.
    expect((await s.job(id)).created_by).toBe('tina');

    for (const [path, init] of [
      [`${ws}/jobs/run_wait_result/p/u/tina/other`, { method: 'POST' }],
      [`${ws}/scripts/get/p/u/tina/deploy`, {}],
      [`${ws}/scripts/create`, json({ path: 'u/tina/x', language: 'bun', content: 'export function main() {}' })],
      [`${ws}/variables/list`, {}],
      ['/api/users/tokens/create', json({ label: 'escalate' })],
      ['/api/users/tokens/list', {}],
    ] as const) {
      const res = await s.fetch(path, { ...init, token: hook });
      expect(res.status, path).toBe(403);
    }
  });

  it('limits a token to one workspace when asked', async () => {
    await s.post('/api/workspaces/create', { id: 'other-ws', name: 'Other' });
    await s.post(`/api/w/other-ws/workspaces/add_user`, { username: 'tina', role: 'developer' });
    const scoped = await (await asTina('/api/users/tokens/create', json({ label: 'main only', workspace_id: s.workspace }))).text();
    expect((await s.fetch(`${ws}/scripts/list`, { token: scoped })).status).toBe(200);
    expect((await s.fetch(`/api/w/other-ws/scripts/list`, { token: scoped })).status).toBe(403);
    expect((await s.fetch(`/api/w/other-ws/scripts/list`, { token })).status).toBe(200);
  });

  it('refuses malformed scopes, naming the field', async () => {
    for (const scopes of [['jobs'], ['jobs:fly'], ['planets:read'], []]) {
      const res = await asTina('/api/users/tokens/create', json({ label: 'bad', scopes }));
      expect(res.status, JSON.stringify(scopes)).toBe(400);
      expect((await res.json()).error.field).toBe('scopes');
    }
  });
});
