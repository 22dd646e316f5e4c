import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * The pages for what a workspace holds (schedules, variables, connections, routes, folders, groups,
 * members), over real HTTP in both shells: each lists what the API lists for the signed-in person,
 * with forms and buttons only for what the API lets them change; a secret's value is in no page;
 * hostile names are escaped. The Chromium test (test/browser/workspace-pages.test.ts) uses them.
 */

let s: TestServer;
const cookies: Record<string, string> = {};
const ws = () => `/api/w/${s.workspace}`;
const SECRET = 'never-in-a-page-4b2e';
const HOSTILE = '<img src=x onerror=alert(1)>';

async function page(who: string, slug: string): Promise<{ status: number; text: string }> {
  const res = await s.fetch(`/w/${s.workspace}/${slug}`, { token: null, headers: { cookie: cookies[who]! } });
  return { status: res.status, text: await res.text() };
}

beforeAll(async () => {
  s = await startServer();
  for (const [username, role] of [['ada', 'admin'], ['opal', 'operator']] as const) {
    expect((await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` })).status).toBe(201);
    expect((await s.post(`${ws()}/workspaces/add_user`, { username, role })).status).toBe(201);
    const login = await s.fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
    cookies[username] = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  }
  expect((await s.post(`${ws()}/folders/create`, { name: 'pub', summary: HOSTILE, extra_perms: { 'u/opal': false } })).status).toBe(201);
  expect((await s.post(`${ws()}/folders/create`, { name: 'hidden' })).status).toBe(201);
  await createScript(s, 'f/pub/echo', 'bash', 'echo hi');
  await createScript(s, 'f/hidden/echo', 'bash', 'echo hidden');
  for (const folder of ['pub', 'hidden']) {
    expect((await s.post(`${ws()}/schedules/create`, { path: `f/${folder}/nightly`, schedule: '0 0 3 * * *', script_path: `f/${folder}/echo`, summary: HOSTILE })).status).toBe(201);
    expect((await s.post(`${ws()}/variables/create`, { path: `f/${folder}/key`, value: SECRET, is_secret: true })).status).toBe(201);
    expect((await s.post(`${ws()}/variables/create`, { path: `f/${folder}/region`, value: 'eu-west-1' })).status).toBe(201);
    expect((await s.post(`${ws()}/http_triggers/create`, { path: `f/${folder}/hook`, route_path: `${folder}/hook`, http_method: 'post', script_path: `f/${folder}/echo` })).status).toBe(201);
  }
  expect((await s.post(`${ws()}/resources/type/create`, { name: 'warehouse', schema: { type: 'object' } })).status).toBe(201);
  expect((await s.post(`${ws()}/resources/create`, { path: 'f/pub/wh', resource_type: 'warehouse', value: { password: SECRET } })).status).toBe(201);
  expect((await s.post(`${ws()}/resources/create`, { path: 'f/hidden/wh', resource_type: 'warehouse', value: {} })).status).toBe(201);
  expect((await s.post(`${ws()}/groups/create`, { name: 'oncall' })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await s?.stop();
});

describe('the workspace pages', () => {
  it('show an admin every item with its forms and buttons, and no secret value', async () => {
    const expected: Record<string, string[]> = {
      schedules: ['f/pub/nightly', 'f/hidden/nightly', 'id="new-schedule"', 'Disable schedule f/hidden/nightly'],
      variables: ['f/pub/key', 'f/hidden/key', 'eu-west-1', 'secret, write-only', 'id="new-variable"'],
      resources: ['f/pub/wh', 'f/hidden/wh', 'warehouse', 'id="new-resource"', 'id="new-resource-type"'],
      routes: ['f/pub/hook', 'f/hidden/hook', 'POST pub/hook', 'id="new-route"'],
      folders: ['pub', 'hidden', 'u/opal reads', 'id="new-folder"'],
      groups: ['oncall', 'id="new-group"'],
      members: ['ada', 'opal', 'id="new-member"', 'Change role of opal'],
    };
    for (const [slug, texts] of Object.entries(expected)) {
      const { status, text } = await page('ada', slug);
      expect(status, slug).toBe(200);
      for (const t of texts) expect(text, `${slug}: ${t}`).toContain(t);
      expect(text, slug).not.toContain(SECRET);
      expect(text, slug).not.toContain(HOSTILE);
    }
    expect((await page('ada', 'folders')).text).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it("show an operator only their folders' items and nothing to change", async () => {
    for (const slug of ['schedules', 'variables', 'resources', 'routes', 'folders', 'groups', 'members']) {
      const { status, text } = await page('opal', slug);
      expect(status, slug).toBe(200);
      expect(text, slug).not.toContain('f/hidden');
      expect(text, slug).not.toContain('<td>hidden');
      expect(text, slug).not.toMatch(/data-api=/);
      expect(text, slug).not.toContain(SECRET);
    }
    expect((await page('opal', 'schedules')).text).toContain('f/pub/nightly');
    expect((await page('opal', 'variables')).text).toContain('eu-west-1');
    expect((await page('opal', 'folders')).text).toContain('<td>pub');
    expect((await page('ada', 'folders')).text).toContain('<td>hidden');
  });

  it('send a visitor without a session to the login page', async () => {
    const res = await s.fetch(`/w/${s.workspace}/variables`, { token: null, redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`/login?next=${encodeURIComponent(`/w/${s.workspace}/variables`)}`);
  });
});
