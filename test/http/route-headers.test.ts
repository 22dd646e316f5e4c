import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * Attack (issue 30): a route anyone may call must not make the service's origin redirect,
 * refresh, preload, ask for credentials or widen a service worker's scope on its script's say-so.
 * Navigation and credential headers are kept only for a caller who proved a credential in a
 * request header; `Service-Worker-Allowed` (like `Set-Cookie`) never.
 */

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const NAVIGATION = { Location: 'https://evil.example/login', Refresh: '0; url=https://evil.example/', Link: '<https://evil.example/x.js>; rel=preload; as=script', 'WWW-Authenticate': 'Basic realm="svc login"' };

/** The route's answer, redirects not followed. */
const get = (url: string, headers: Record<string, string> = {}) => s.fetch(url, { redirect: 'manual', headers, token: null });
const routeUrl = (name: string, header: string) => `/api/r/${s.workspace}/${name}?header=${encodeURIComponent(header)}&value=${encodeURIComponent((NAVIGATION as Record<string, string>)[header] ?? '/')}`;

beforeAll(async () => {
  s = await startServer();
  await createScript(s, 'u/admin/steer', 'bun', 'export function main(header: string, value: string) { return { svc_status_code: 302, svc_headers: { [header]: value }, result: "moved" }; }');
  expect((await s.post(`${ws()}/variables/create`, { path: 'u/admin/key', value: 'the-key', is_secret: true })).status).toBe(201);
  for (const [name, auth] of [['open', { authentication_method: 'none' }], ['keyed', { authentication_method: 'api_key', secret_variable: 'u/admin/key' }], ['own', { authentication_method: 'svc' }]] as const) {
    const res = await s.post(`${ws()}/http_triggers/create`, { path: `u/admin/${name}`, route_path: name, http_method: 'get', script_path: 'u/admin/steer', ...auth });
    expect(res.status, await res.clone().text()).toBe(201);
  }
});
afterAll(() => s?.stop());

async function expectRefused(res: Response, header: string): Promise<void> {
  expect(res.status, header).toBe(500);
  expect(res.headers.get(header), header).toBeNull();
  const error = (await res.json()).error;
  expect(error.code).toBe('invalid_svc_response');
  expect(error.message).toContain(header);
}

describe('navigation and credential headers from a script', () => {
  it('are refused on a route without authentication', async () => {
    for (const header of [...Object.keys(NAVIGATION), 'Service-Worker-Allowed', 'Set-Cookie']) {
      await expectRefused(await get(routeUrl('open', header)), header);
    }
  });

  it('are refused when the token came in the URL, which a link can carry', async () => {
    await expectRefused(await get(`${routeUrl('own', 'Location')}&token=${s.token}`), 'Location');
    const webhook = `${ws()}/jobs/run_wait_result/p/u/admin/steer?payload=${encodeURIComponent(Buffer.from(JSON.stringify({ header: 'Refresh', value: '0; url=https://evil.example/' })).toString('base64url'))}`;
    await expectRefused(await get(`${webhook}&token=${s.token}`), 'Refresh');
  });

  it('are kept for a caller who proved a credential in a request header; Service-Worker-Allowed never', async () => {
    const keyed = await get(routeUrl('keyed', 'Location'), { 'x-api-key': 'the-key' });
    expect(keyed.status).toBe(302);
    expect(keyed.headers.get('location')).toBe(NAVIGATION.Location);
    const own = await get(routeUrl('own', 'WWW-Authenticate'), { authorization: `Bearer ${s.token}` });
    expect(own.status).toBe(302);
    expect(own.headers.get('www-authenticate')).toBe(NAVIGATION['WWW-Authenticate']);
    await expectRefused(await get(routeUrl('keyed', 'Service-Worker-Allowed'), { 'x-api-key': 'the-key' }), 'Service-Worker-Allowed');
  });
});
