import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, waitForJob, type TestServer } from './harness.js';

/**
 * The console's front door (issue 36): `/` leads to the login page, the bootstrap admin (who has a
 * token and no password) signs in with the token, `/` then leads to the workspace home, which
 * shows what waits for them, recent top-level runs and failing schedules. Only an unrestricted
 * personal token turns into a session.
 */

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const signIn = (body: unknown) => s.fetch('/api/auth/login', { ...json(body), token: null });
const cookieOf = (res: Response) => (res.headers.get('set-cookie') ?? '').split(';')[0];
const page = (path: string, cookie?: string) => s.fetch(path, { token: null, redirect: 'manual', headers: cookie ? { cookie } : {} });

beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s?.stop();
});

describe('front door', () => {
  it('sends a visitor without a session from / to the login page, which comes back to /', async () => {
    const res = await page('/');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/login?next=%2F');
    const login = await page('/login');
    expect(login.status).toBe(200);
    expect(await login.text()).toContain('Sign in with an API token');
  });

  it('signs the admin in with the admin token; / then leads to the workspace home with its sections', async () => {
    const res = await signIn({ token: s.token });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ username: 'admin' });
    const cookie = cookieOf(res);
    // The AWS shell is reached through API Gateway, HTTPS only: its session is the __Host- one.
    expect(cookie).toMatch(process.env.SVC_TEST_SHELL === 'aws' ? /^__Host-svc_session=/ : /^svc_session=/);
    // The session is a session, not the token: it works on its own.
    expect(cookie).not.toContain(s.token);
    const root = await page('/', cookie);
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe(`/w/${s.workspace}`);
    const home = await page(`/w/${s.workspace}`, cookie);
    expect(home.status).toBe(200);
    const text = await home.text();
    for (const heading of ['Awaiting your approval', 'Recent runs', 'Failing schedules', 'Scripts and flows']) expect(text).toContain(heading);
    expect((await s.fetch('/api/users/whoami', { token: null, headers: { cookie } })).status).toBe(200);
  });

  it('over HTTPS (a proxy ending TLS) names the session __Host-svc_session, which a sibling subdomain cannot set, and reads no other', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    const res = await s.fetch('/api/auth/login', { ...json({ token: s.token }), token: null, headers: { ...https, 'content-type': 'application/json' } });
    expect(res.status, await res.clone().text()).toBe(200);
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^__Host-svc_session=[^;]+;/);
    expect(setCookie).toMatch(/; Path=\//);
    expect(setCookie).toMatch(/; Secure/);
    expect(setCookie).not.toMatch(/Domain=/i);
    const session = cookieOf(res).slice('__Host-svc_session='.length);
    const whoami = (cookie: string) => s.fetch('/api/users/whoami', { token: null, headers: { ...https, cookie } });
    expect((await whoami(`__Host-svc_session=${session}`)).status).toBe(200);
    // A plain svc_session cookie is what a page on a sibling subdomain could plant: over HTTPS it is not read.
    expect((await whoami(`svc_session=${session}`)).status).toBe(401);
    const out = await s.fetch('/api/auth/logout', { method: 'POST', token: null, headers: { ...https, cookie: `__Host-svc_session=${session}` } });
    expect(out.headers.get('set-cookie')).toMatch(/^__Host-svc_session=;.*Max-Age=0/);
    expect((await whoami(`__Host-svc_session=${session}`)).status).toBe(401);
  });

  it('ends the session a logout carries under either name, whatever scheme the proxy reports for the logout', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    const res = await s.fetch('/api/auth/login', { ...json({ token: s.token }), token: null, headers: { ...https, 'content-type': 'application/json' } });
    const hostCookie = cookieOf(res);
    expect(hostCookie).toMatch(/^__Host-svc_session=/);
    const whoami = () => s.fetch('/api/users/whoami', { token: null, headers: { ...https, cookie: hostCookie } });
    expect((await whoami()).status).toBe(200);
    // Reported as plain http (no X-Forwarded-Proto): the answer said "logged out" while the session lived on.
    const out = await s.fetch('/api/auth/logout', { method: 'POST', token: null, headers: { cookie: hostCookie } });
    expect(out.status).toBe(200);
    expect((await whoami()).status).toBe(401);
  });

  it('refuses a scoped, a workspace-bound, an unknown token and a session value as sign-in tokens', async () => {
    const scoped = await (await s.post('/api/users/tokens/create', { label: 'scoped', scopes: ['jobs:read'] })).text();
    const bound = await (await s.post('/api/users/tokens/create', { label: 'bound', workspace_id: s.workspace })).text();
    for (const token of [scoped, bound]) {
      const res = await signIn({ token });
      expect(res.status).toBe(403);
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    const unknown = await signIn({ token: 'svc_nope0000_' + 'x'.repeat(43) });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('set-cookie')).toBeNull();
    const session = cookieOf(await signIn({ token: s.token })).split('=')[1];
    expect((await signIn({ token: session })).status).toBe(403);
    // Bad shapes are a 400, never a 5xx.
    for (const body of [{ token: '' }, { token: 7 }, { token: s.token, extra: 1 }]) expect((await signIn(body)).status).toBe(400);
  });

  it('tells a signed-in person who belongs to no workspace so, instead of a 404', async () => {
    expect((await s.post('/api/users/create', { username: 'loner', email: 'loner@example.com', password: 'loner-password' })).status).toBe(201);
    const cookie = cookieOf(await signIn({ email: 'loner', password: 'loner-password' }));
    const res = await page('/', cookie);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('No workspace yet');
  });
});

describe('top-level runs', () => {
  it('lists a flow run without its steps with top_level=1, and with them without it', async () => {
    const flow = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/two_steps',
      summary: 'two steps',
      value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bash', content: 'echo 1', input_transforms: {} } }, { id: 'b', value: { type: 'rawscript', language: 'bash', content: 'echo 2', input_transforms: {} } }] },
      schema: { type: 'object', properties: {}, required: [] },
    });
    expect(flow.status, await flow.clone().text()).toBe(201);
    const started = await s.fetch(`${ws()}/jobs/run/f/u/admin/two_steps`, json({}));
    expect(started.status).toBe(201);
    const id = await started.text();
    expect((await waitForJob(s, id)).success).toBe(true);
    const list = async (query: string) => ((await (await s.fetch(`${ws()}/jobs/runs?${query}`)).json()) as { runs: { id: string; parent_job: string | null }[] }).runs;
    const all = await list('path=u/admin/two_steps');
    expect(all.some((r) => r.parent_job === id)).toBe(true);
    const top = await list('path=u/admin/two_steps&top_level=1');
    expect(top.map((r) => r.id)).toEqual([id]);
    expect((await s.fetch(`${ws()}/jobs/runs?top_level=maybe`)).status).toBe(400);
  });
});
