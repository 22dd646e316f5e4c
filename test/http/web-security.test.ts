import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * Issue 15: what a script answers is served as untrusted content, never as the service's own
 * page; service pages carry strict security headers; a browser's session cookie only acts for
 * requests from the service's own pages.
 */
let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.stop());

/** A GET with exactly these headers: fetch() sets Sec-Fetch-Mode itself (always `cors`). */
function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(s.url + path, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function runSync(path: string, result: string): Promise<Response> {
  await createScript(s, path, 'bun', `export function main() { return ${result}; }`);
  return s.fetch(`${ws()}/jobs/run_wait_result/p/${path}`, { method: 'POST' });
}

describe('user content from sync webhooks', () => {
  it('serves HTML a script returns sandboxed (opaque origin, no scripts) and without sniffing', async () => {
    const res = await runSync('f/web/page', `{ svc_content_type: 'text/html', result: '<script>fetch("/api/users/whoami")</script>' }`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html');
    expect(res.headers.get('content-security-policy')).toBe('sandbox');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('refuses Set-Cookie and CORS headers with an error naming the header', async () => {
    for (const [name, path] of [['Set-Cookie', 'f/web/cookie'], ['Access-Control-Allow-Origin', 'f/web/cors']]) {
      const res = await runSync(path, `{ svc_content_type: 'text/html', svc_headers: { '${name}': 'x' }, result: 'hi' }`);
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      const body = await res.json();
      expect(body.error.code).toBe('invalid_svc_response');
      expect(body.error.message).toContain(name);
    }
  });

  it('answers a wrong Content-Length with a clear error instead of a broken response', async () => {
    const res = await runSync('f/web/length', `{ svc_content_type: 'text/plain', svc_headers: { 'Content-Length': '1000' }, result: 'short' }`);
    const body = await res.json();
    expect(body.error.code).toBe('invalid_svc_response');
    expect(body.error.message).toContain('Content-Length');
  });

  it('answers a header value outside Latin-1 with a structured error naming the header', async () => {
    const res = await runSync('f/web/latin', `{ svc_headers: { 'X-Greeting': 'héllo ☃' }, result: 1 }`);
    const body = await res.json();
    expect(body.error.code).toBe('invalid_svc_response');
    expect(body.error.message).toContain('X-Greeting');
  });
});

describe('service pages', () => {
  it('send a strict CSP that forbids framing, nosniff and no-referrer', async () => {
    const approvalUrl = `/approve/${s.workspace}/00000000-0000-0000-0000-000000000000/r1/bad-signature`;
    for (const path of ['/login', '/tokens', approvalUrl, '/api/version']) {
      const res = await s.fetch(path, { token: null });
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("default-src 'none'");
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
    }
    // The login page's own script keeps working: its hash is in the header policy too.
    expect((await s.fetch('/login', { token: null })).headers.get('content-security-policy')).toMatch(/script-src 'sha256-/);
  });
});

describe('session cookie', () => {
  let cookie: string;
  beforeAll(async () => {
    expect((await s.post('/api/users/create', { username: 'erin', email: 'erin@example.com', password: 'erin-password' })).status).toBe(201);
    expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'erin', role: 'admin' })).status).toBe(201);
    await createScript(s, 'f/web/count', 'bun', 'export function main() { return 1; }');
    const res = await s.fetch('/api/auth/login', { ...json({ email: 'erin@example.com', password: 'erin-password' }), token: null });
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    cookie = setCookie.split(';')[0];
  });

  const runs = async () => (await (await s.fetch(`${ws()}/jobs/list?script_path_exact=f/web/count`)).json()).length;

  it('does not start a run from a cross-origin text/plain POST carrying the cookie', async () => {
    const before = await runs();
    for (const headers of <Array<Record<string, string>>>[
      { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      { origin: 'https://evil.example' },
      { origin: 'null' },
    ]) {
      const res = await s.fetch(`${ws()}/jobs/run/p/f/web/count`, { method: 'POST', token: null, headers: { cookie, 'content-type': 'text/plain', ...headers }, body: '{}' });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect((await res.json()).error.code).toBe('cross_origin_request');
    }
    const get = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/web/count`, { token: null, headers: { cookie, 'sec-fetch-site': 'cross-site' } });
    expect(get.status).toBe(403);
    expect(await runs()).toBe(before);
  });

  it('does not start a run from a GET that is a link followed or an image on one of its own pages', async () => {
    // Attack: a link on a page of the service (a job's logs, an approval form's markdown, the login
    // page's `next`) to jobs/run_wait_result/...?payload= is same-origin when followed: the run
    // was the link author's choice, made with the session of whoever clicked it.
    const before = await runs();
    for (const mode of ['navigate', 'no-cors']) {
      const res = await rawGet(`${ws()}/jobs/run_wait_result/p/f/web/count`, { cookie, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': mode });
      expect(res.status, mode).toBe(403);
      expect(JSON.parse(res.body).error.code).toBe('cross_origin_request');
    }
    expect(await runs()).toBe(before);
    // A page's script may (fetch), and so may the person typing the URL (Sec-Fetch-Site: none).
    for (const headers of [{ 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' }, { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' }]) {
      const res = await rawGet(`${ws()}/jobs/run_wait_result/p/f/web/count`, { cookie, ...headers });
      expect(res.status, JSON.stringify(headers)).toBe(200);
    }
    expect(await runs()).toBe(before + 2);
  });

  it('still runs for the service\'s own pages and for token clients', async () => {
    const before = await runs();
    const own = await s.fetch(`${ws()}/jobs/run/p/f/web/count`, { method: 'POST', token: null, headers: { cookie, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' }, body: '{}' });
    expect(own.status, await own.clone().text()).toBe(201);
    const url = new URL(s.url);
    const byOrigin = await s.fetch(`${ws()}/jobs/run/p/f/web/count`, { method: 'POST', token: null, headers: { cookie, origin: url.origin, 'content-type': 'application/json' }, body: '{}' });
    expect(byOrigin.status).toBe(201);
    const byToken = await s.fetch(`${ws()}/jobs/run/p/f/web/count`, { method: 'POST', headers: { origin: 'https://ci.example', 'content-type': 'application/json' }, body: '{}' });
    expect(byToken.status).toBe(201);
    expect(await runs()).toBe(before + 3);
  });
});
