import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Custom HTTP routes (issue 21) over real HTTP, in both shells: a script exposed at a URL of the
 * user's choosing with each authentication method, conflicts, async routes, the reverse-proxy form
 * (a token injected from a secret variable), bad input, and the audit log.
 */

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const HMAC_SECRET = `whsec-${Math.random().toString(36).slice(2)}`;
const API_KEY = `key-${Math.random().toString(36).slice(2)}`;

const route = (body: Record<string, unknown>) => s.post(`${ws()}/http_triggers/create`, body);
/** A call to a route, without the admin token the harness adds by default. */
const call = (path: string, init: RequestInit = {}) => s.fetch(`/api/r/${s.workspace}/${path}`, { ...init, token: null });
const sign = (body: string, secret = HMAC_SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

beforeAll(async () => {
  s = await startServer();
  await createScript(s, 'u/admin/order', 'bun', 'export function main(id: string, amount: number, note = "") { return { id, amount, note }; }');
  await createScript(s, 'u/admin/shaped', 'bun', 'export function main(id: string) { return { svc_status_code: 202, svc_headers: { "x-order": id }, result: { accepted: id } }; }');
  for (const [path, value] of [
    ['u/admin/hmac_secret', HMAC_SECRET],
    ['u/admin/api_key', API_KEY],
    ['u/admin/basic_password', 'open-sesame'],
  ]) {
    expect((await s.post(`${ws()}/variables/create`, { path, value, is_secret: true })).status).toBe(201);
  }
  const loginType = { type: 'object', properties: { username: { type: 'string' }, password: { type: 'string' } }, required: ['username', 'password'] };
  expect((await s.post(`${ws()}/resources/type/create`, { name: 'http_basic', schema: loginType })).status).toBe(201);
  const login = { username: 'partner', password: '$var:u/admin/basic_password' };
  expect((await s.post(`${ws()}/resources/create`, { path: 'u/admin/partner_login', resource_type: 'http_basic', value: login })).status).toBe(201);
});
afterAll(() => s?.stop());

describe('authentication methods', () => {
  it('signature: POST /api/r/orders/:id runs the script with a correct HMAC and refuses a wrong one', async () => {
    const created = await route({ path: 'u/admin/orders', route_path: 'orders/:id', http_method: 'POST', script_path: 'u/admin/order', authentication_method: 'signature', secret_variable: 'u/admin/hmac_secret' });
    expect(created.status, await created.clone().text()).toBe(201);
    expect(await created.json()).toMatchObject({ route_path: 'orders/:id', http_method: 'post', signature_header: 'X-Signature', authentication_method: 'signature' });

    const body = JSON.stringify({ amount: 5, id: 'not-from-the-body' });
    const ok = await call('orders/42?note=rush', { method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': sign(body) }, body });
    expect(ok.status).toBe(200);
    // The path segment wins over the body, the query parameter is an argument.
    expect(await ok.json()).toEqual({ id: '42', amount: 5, note: 'rush' });

    const wrong = await call('orders/42', { method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': sign(body, 'guess') }, body });
    expect(wrong.status).toBe(401);
    expect((await wrong.json()).error.code).toBe('unauthorized');
    const tampered = await call('orders/42', { method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': sign(body) }, body: body.replace('5', '500') });
    expect(tampered.status).toBe(401);
    expect((await call('orders/42', { method: 'POST', body })).status).toBe(401);
  });

  it('none: anyone may call', async () => {
    expect((await route({ path: 'u/admin/open', route_path: 'open/:id', http_method: 'get', script_path: 'u/admin/order', authentication_method: 'none' })).status).toBe(201);
    const res = await call('open/7?amount=3');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: '7', amount: '3', note: '' });
  });

  it('api_key: the key in the named header, checked against a secret variable', async () => {
    const res = await route({ path: 'u/admin/keyed', route_path: 'keyed/:id', http_method: 'post', script_path: 'u/admin/order', authentication_method: 'api_key', api_key_header: 'X-Partner-Key', secret_variable: 'u/admin/api_key' });
    expect(res.status, await res.clone().text()).toBe(201);
    const body = JSON.stringify({ amount: 1 });
    expect((await call('keyed/1', { method: 'POST', headers: { 'x-partner-key': API_KEY }, body })).status).toBe(200);
    expect((await call('keyed/1', { method: 'POST', headers: { 'x-partner-key': `${API_KEY}x` }, body })).status).toBe(401);
    expect((await call('keyed/1', { method: 'POST', body })).status).toBe(401);
  });

  it('basic: user name and password of a connection (its password a $var reference)', async () => {
    expect((await route({ path: 'u/admin/basic', route_path: 'basic/:id', http_method: 'post', script_path: 'u/admin/order', authentication_method: 'basic', basic_auth_resource: 'u/admin/partner_login' })).status).toBe(201);
    const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    const body = JSON.stringify({ amount: 2 });
    const ok = await call('basic/9', { method: 'POST', headers: { authorization: basic('partner', 'open-sesame') }, body });
    expect(ok.status).toBe(200);
    expect((await ok.json()).id).toBe('9');
    expect((await call('basic/9', { method: 'POST', headers: { authorization: basic('partner', 'wrong') }, body })).status).toBe(401);
    expect((await call('basic/9', { method: 'POST', headers: { authorization: basic('someone', 'open-sesame') }, body })).status).toBe(401);
  });

  it('svc: a Bearer token allowed to run the script, as for webhooks; 4.4 shaping applies', async () => {
    expect((await route({ path: 'u/admin/svc', route_path: 'svc/:id', http_method: 'put', script_path: 'u/admin/shaped' })).status).toBe(201);
    expect((await call('svc/3', { method: 'PUT' })).status).toBe(401);
    const res = await s.fetch(`/api/r/${s.workspace}/svc/3`, { method: 'PUT' });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-order')).toBe('3');
    expect(await res.json()).toEqual({ accepted: '3' });
    expect((await call('svc/3', { method: 'PUT', headers: { authorization: 'Bearer not-a-token' } })).status).toBe(401);
  });
});

describe('managing routes', () => {
  it('refuses a conflicting route with a 409 naming the other one; another method is fine', async () => {
    await route({ path: 'u/admin/conflict_a', route_path: 'items/:id', http_method: 'post', script_path: 'u/admin/order', authentication_method: 'none' });
    const clash = await route({ path: 'u/admin/conflict_b', route_path: '/items/:item/', http_method: 'POST', script_path: 'u/admin/order', authentication_method: 'none' });
    expect(clash.status).toBe(409);
    expect((await clash.json()).error.message).toContain('u/admin/conflict_a');
    expect((await s.fetch(`${ws()}/http_triggers/get/u/admin/conflict_b`)).status).toBe(404);
    expect((await route({ path: 'u/admin/conflict_b', route_path: 'items/:id', http_method: 'delete', script_path: 'u/admin/order', authentication_method: 'none' })).status).toBe(201);
    // A static segment is more specific than a parameter at the same place.
    await createScript(s, 'u/admin/new_item', 'bun', 'export function main() { return "the new-item form"; }');
    expect((await route({ path: 'u/admin/items_new', route_path: 'items/new', http_method: 'post', script_path: 'u/admin/new_item', authentication_method: 'none' })).status).toBe(201);
    expect(await (await call('items/new', { method: 'POST' })).json()).toBe('the new-item form');
    expect((await (await call('items/old', { method: 'POST', body: '{"amount": 1}' })).json()).id).toBe('old');
  });

  it('applies changes at once: an update moves the route, a delete removes it', async () => {
    await route({ path: 'u/admin/moving', route_path: 'before', http_method: 'get', script_path: 'u/admin/order', authentication_method: 'none' });
    expect((await call('before?id=1&amount=1')).status).toBe(200);
    const moved = await s.post(`${ws()}/http_triggers/update/u/admin/moving`, { route_path: 'after', http_method: 'get', script_path: 'u/admin/order', authentication_method: 'none' });
    expect(moved.status, await moved.clone().text()).toBe(200);
    expect((await call('before?id=1&amount=1')).status).toBe(404);
    expect((await call('after?id=1&amount=1')).status).toBe(200);
    // The old URL is free again.
    expect((await route({ path: 'u/admin/took_over', route_path: 'before', http_method: 'get', script_path: 'u/admin/order', authentication_method: 'none' })).status).toBe(201);
    const list = await (await s.fetch(`${ws()}/http_triggers/list`)).json();
    expect(list.map((t: { path: string }) => t.path)).toContain('u/admin/moving');
    expect((await s.fetch(`${ws()}/http_triggers/delete/u/admin/moving`, { method: 'DELETE' })).status).toBe(200);
    expect((await call('after?id=1&amount=1')).status).toBe(404);
  });

  it('answers an async route with the job id', async () => {
    expect((await route({ path: 'u/admin/later', route_path: 'later/:id', http_method: 'post', script_path: 'u/admin/order', is_async: true, authentication_method: 'none' })).status).toBe(201);
    const res = await call('later/5', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount": 8}' });
    expect(res.status).toBe(201);
    const job = await waitForJob(s, await res.text());
    expect(job.result).toEqual({ id: '5', amount: 8, note: '' });
  });

  it('answers bad input with a 4xx naming the field, and stores nothing', async () => {
    const base = { path: 'u/admin/bad', route_path: 'bad/:id', http_method: 'post', script_path: 'u/admin/order', authentication_method: 'none' };
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ route_path: 'bad/:id/:id' }, 400, 'route_path'],
      [{ route_path: 'bad/<script>' }, 400, 'route_path'],
      [{ route_path: '../etc' }, 400, 'route_path'],
      [{ http_method: 'TRACE' }, 400, 'http_method'],
      [{ script_path: 'u/admin/nothing_here' }, 400, 'script_path'],
      [{ is_flow: true }, 400, 'script_path'],
      [{ authentication_method: 'magic' }, 400, 'authentication_method'],
      [{ authentication_method: 'signature' }, 400, 'secret_variable'],
      [{ authentication_method: 'signature', secret_variable: 'u/admin/missing' }, 400, 'secret_variable'],
      [{ authentication_method: 'basic' }, 400, 'basic_auth_resource'],
      [{ authentication_method: 'api_key', secret_variable: 'u/admin/api_key', api_key_header: 'bad header' }, 400, 'api_key_header'],
      [{ inject_token_variable: 'u/admin/api_key', authentication_method: 'svc' }, 400, 'inject_token_variable'],
      [{ path: 'nowhere' }, 400, 'path'],
    ];
    for (const [change, status, field] of cases) {
      const res = await route({ ...base, ...change });
      expect(res.status, JSON.stringify(change)).toBe(status);
      expect((await res.json()).error.field, JSON.stringify(change)).toBe(field);
    }
    expect((await s.fetch(`${ws()}/http_triggers/get/u/admin/bad`)).status).toBe(404);
    expect((await route(base)).status).toBe(201);
  });

  it('lets only a token allowed to write routes save one', async () => {
    const scopedRes = await s.post('/api/users/tokens/create', { label: 'routes only', scopes: ['http_triggers:read'] });
    expect(scopedRes.status).toBe(201);
    const scoped = await scopedRes.text();
    const res = await s.fetch(`${ws()}/http_triggers/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: 'u/admin/scoped', route_path: 'scoped', http_method: 'get', script_path: 'u/admin/order', authentication_method: 'none' }),
      token: scoped,
    });
    expect(res.status).toBe(403);
    expect((await s.fetch(`${ws()}/http_triggers/list`, { token: scoped })).status).toBe(200);
  });

  it('writes creating, changing and deleting routes to the audit log', async () => {
    const entries = await (await s.fetch('/api/audit/list')).json();
    const events = entries.filter((e: { path?: string }) => e.path === 'u/admin/moving').map((e: { event: string }) => e.event);
    expect(events).toEqual(['http_trigger_created', 'http_trigger_updated', 'http_trigger_deleted']);
    const created = entries.find((e: { path?: string; event: string }) => e.path === 'u/admin/orders' && e.event === 'http_trigger_created');
    expect(created).toMatchObject({ by: 'admin', route: 'POST /api/r/main/orders/:id', authentication_method: 'signature' });
    expect(JSON.stringify(entries)).not.toContain(HMAC_SECRET);
  });
});

describe('the reverse-proxy form', () => {
  it('reaches a sync webhook at a custom URL with a token injected from a secret variable', async () => {
    const token = await (await s.post('/api/users/tokens/create', { label: 'proxy', scopes: ['jobs:run:u/admin/order'] })).text();
    expect((await s.post(`${ws()}/variables/create`, { path: 'u/admin/proxy_token', value: token, is_secret: true })).status).toBe(201);
    const created = await route({ path: 'u/admin/proxy', route_path: 'public/order/:id', http_method: 'post', script_path: 'u/admin/order', authentication_method: 'none', inject_token_variable: 'u/admin/proxy_token' });
    expect(created.status, await created.clone().text()).toBe(201);
    const res = await call('public/order/11', { method: 'POST', body: '{"amount": 4}' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: '11', amount: 4, note: '' });
    // The run is the token's: a token that may not run the script gets its 403, as at the run endpoint.
    const narrow = await (await s.post('/api/users/tokens/create', { label: 'narrow', scopes: ['jobs:run:u/admin/other'] })).text();
    expect((await s.post(`${ws()}/variables/update/u/admin/proxy_token`, { value: narrow })).status).toBe(200);
    expect((await call('public/order/11', { method: 'POST', body: '{"amount": 4}' })).status).toBe(403);
  });
});
