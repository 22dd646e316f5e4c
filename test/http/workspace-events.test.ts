import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { createScript, startServer, type TestServer } from './harness.js';
import { FAST_WEBHOOKS, startReceiver, type Receiver } from './webhook-receiver.js';

/**
 * Workspace webhook events (spec 6.1) over real HTTP, in both shells: every change reaches a
 * loopback receiver as a CloudEvent that the `standardwebhooks` library verifies, in order per
 * item, retried after 5xx, with a delivery log and redelivery. Retries are shortened with the
 * instance settings the README names; SVC_WEBHOOK_ALLOW_PRIVATE lets the service reach loopback.
 */

const secret = `whsec_${randomBytes(32).toString('base64')}`;

describe('workspace webhook', () => {
  let s: TestServer;
  let receiver: Receiver;
  const ws = () => `/api/w/${s.workspace}`;
  const del = (path: string) => s.fetch(path, { method: 'DELETE' });

  beforeAll(async () => {
    receiver = await startReceiver();
    // The token sweep every second, for the token events.
    s = await startServer({ env: { ...FAST_WEBHOOKS, SVC_TOKEN_SWEEP_SECONDS: '1' } });
  });
  afterAll(async () => {
    if (process.env.SVC_TEST_DEBUG) console.log(s.output());
    await s?.stop();
    await receiver?.close();
  });

  it('is set by an admin and shown without its secret', async () => {
    const res = await s.post(`${ws()}/workspaces/edit_webhook`, { webhook: receiver.url, secret });
    expect(res.status, await res.clone().text()).toBe(200);
    const settings = await (await s.fetch(`${ws()}/workspaces/get_settings`)).json();
    expect(settings).toMatchObject({ webhook: receiver.url, has_secret: true });
    expect(JSON.stringify(settings)).not.toContain(secret.slice(6, 20));
  });

  it('refuses a URL that is not http(s) and a malformed secret with 400, changing nothing', async () => {
    for (const body of [{ webhook: 'file:///etc/passwd' }, { webhook: 'not a url' }, { webhook: receiver.url, secret: 'short' }, { webhook: 42 }]) {
      const res = await s.post(`${ws()}/workspaces/edit_webhook`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await (await s.fetch(`${ws()}/workspaces/get_settings`)).json()).toMatchObject({ webhook: receiver.url, has_secret: true });
  });

  it('announces every lifecycle change as a signed CloudEvent, in order per item', async () => {
    const hash1 = await createScript(s, 'u/admin/hooked', 'bun', 'export function main() { return 1 }');
    const hash2 = await createScript(s, 'u/admin/hooked', 'bun', 'export function main() { return 2 }', { parent_hash: hash1 });
    expect((await s.post(`${ws()}/scripts/delete/p/u/admin/hooked`, {})).status).toBe(200);

    expect((await s.post(`${ws()}/flows/create`, { path: 'u/admin/hooked_flow', summary: 's', value: { modules: [] } })).status).toBe(201);
    expect((await s.post(`${ws()}/flows/update/u/admin/hooked_flow`, { summary: 't', value: { modules: [] } })).status).toBe(200);
    expect((await s.post(`${ws()}/flows/archive/u/admin/hooked_flow`, { archived: true })).status).toBe(200);
    expect((await (await s.fetch(`${ws()}/flows/list`)).json()).map((f: any) => f.path)).not.toContain('u/admin/hooked_flow');
    expect((await (await s.fetch(`${ws()}/flows/list?show_archived=true`)).json())).toContainEqual(expect.objectContaining({ path: 'u/admin/hooked_flow', archived: true }));
    expect((await s.post(`${ws()}/flows/archive/u/admin/hooked_flow`, { archived: 'yes' })).status).toBe(400);
    expect((await del(`${ws()}/flows/delete/u/admin/hooked_flow`)).status).toBe(200);

    expect((await s.post(`${ws()}/apps/create`, { path: 'u/admin/hooked_app', summary: 'a', value: { grid: [] } })).status).toBe(201);
    expect((await s.post(`${ws()}/apps/update/u/admin/hooked_app`, { value: { grid: [{ id: 'a' }] } })).status).toBe(200);
    expect((await del(`${ws()}/apps/delete/u/admin/hooked_app`)).status).toBe(200);

    expect((await s.post(`${ws()}/resources/type/create`, { name: 'hook_type', schema: { type: 'object' } })).status).toBe(201);
    expect((await s.post(`${ws()}/resources/type/update/hook_type`, { description: 'changed' })).status).toBe(200);
    expect((await s.post(`${ws()}/resources/create`, { path: 'u/admin/hook_res', resource_type: 'hook_type', value: { password: 'resource-secret-value' } })).status).toBe(201);
    expect((await s.post(`${ws()}/resources/update/u/admin/hook_res`, { value: { password: 'resource-secret-value-2' } })).status).toBe(200);
    expect((await del(`${ws()}/resources/delete/u/admin/hook_res`)).status).toBe(200);
    expect((await del(`${ws()}/resources/type/delete/hook_type`)).status).toBe(200);

    expect((await s.post(`${ws()}/variables/create`, { path: 'u/admin/hook_var', value: 'variable-secret-value', is_secret: true })).status).toBe(201);
    expect((await s.post(`${ws()}/variables/update/u/admin/hook_var`, { value: 'variable-secret-value-2' })).status).toBe(200);
    expect((await del(`${ws()}/variables/delete/u/admin/hook_var`)).status).toBe(200);

    expect((await s.post(`${ws()}/folders/create`, { name: 'hooked' })).status).toBe(201);
    expect((await s.post(`${ws()}/folders/update/hooked`, { summary: 'changed' })).status).toBe(200);
    expect((await del(`${ws()}/folders/delete/hooked`)).status).toBe(200);

    const expected: Array<[string, string]> = [
      ['CreateScript', 'u/admin/hooked'],
      ['UpdateScript', 'u/admin/hooked'],
      ['DeleteScriptPath', 'u/admin/hooked'],
      ['CreateFlow', 'u/admin/hooked_flow'],
      ['UpdateFlow', 'u/admin/hooked_flow'],
      ['ArchiveFlow', 'u/admin/hooked_flow'],
      ['DeleteFlow', 'u/admin/hooked_flow'],
      ['CreateApp', 'u/admin/hooked_app'],
      ['UpdateApp', 'u/admin/hooked_app'],
      ['DeleteApp', 'u/admin/hooked_app'],
      ['CreateResourceType', 'hook_type'],
      ['UpdateResourceType', 'hook_type'],
      ['DeleteResourceType', 'hook_type'],
      ['CreateResource', 'u/admin/hook_res'],
      ['UpdateResource', 'u/admin/hook_res'],
      ['DeleteResource', 'u/admin/hook_res'],
      ['CreateVariable', 'u/admin/hook_var'],
      ['UpdateVariable', 'u/admin/hook_var'],
      ['DeleteVariable', 'u/admin/hook_var'],
      ['CreateFolder', 'f/hooked'],
      ['UpdateFolder', 'f/hooked'],
      ['DeleteFolder', 'f/hooked'],
    ];
    const has = (events: Array<Record<string, any>>) => expected.every(([type, subject]) => events.some((e) => e.type === type && e.subject === subject));
    const events = await receiver.waitFor(has);

    const verifier = new Webhook(secret);
    for (const request of receiver.requests.filter((r) => r.status === 200)) {
      // Throws unless the signature, id and timestamp headers match the body.
      verifier.verify(request.body, request.headers as Record<string, string>);
      expect(request.headers['content-type']).toBe('application/cloudevents+json');
      expect(request.body).not.toContain('secret-value');
    }
    for (const [type, subject] of expected) {
      const e = events.find((x) => x.type === type && x.subject === subject)!;
      expect(e).toMatchObject({ specversion: '1.0', type, subject, datacontenttype: 'application/json' });
      expect(e.source).toMatch(new RegExp(`/api/w/${s.workspace}$`));
      expect(Number.isNaN(Date.parse(e.time))).toBe(false);
      expect(e.data).toMatchObject({ workspace: s.workspace, path: subject, user: 'admin' });
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(events.find((e) => e.type === 'CreateScript')!.data).toMatchObject({ kind: 'script', hash: hash1 });
    expect(events.find((e) => e.type === 'UpdateScript')!.data).toMatchObject({ kind: 'script', hash: hash2, parent_hash: hash1 });
    expect(events.find((e) => e.type === 'CreateFlow')!.data.version).toEqual(expect.any(Number));
    expect(events.find((e) => e.type === 'ArchiveFlow')!.data).toMatchObject({ kind: 'flow', archived: true });
    expect(events.filter((e) => e.subject === 'u/admin/hooked_flow').map((e) => e.type)).toEqual(['CreateFlow', 'UpdateFlow', 'ArchiveFlow', 'DeleteFlow']);
    expect(events.find((e) => e.type === 'CreateVariable')!.data).toMatchObject({ kind: 'variable', is_secret: true });

    // In order per item: each item's events arrive as they happened.
    expect(events.find((e) => e.type === 'UpdateApp')!.data).toMatchObject({ kind: 'app', version: expect.any(Number) });
    for (const item of ['u/admin/hooked', 'u/admin/hooked_flow', 'u/admin/hooked_app', 'hook_type', 'u/admin/hook_res', 'u/admin/hook_var', 'f/hooked']) {
      const order = events.filter((e) => e.subject === item && e.type !== 'ArchiveFlow').map((e) => e.type.replace(/Path$/, ''));
      expect(order.map((t) => t.match(/^(Create|Update|Delete)/)![1]), item).toEqual(['Create', 'Update', 'Delete']);
    }
  });

  it('announces a token nearing expiry and one expired and deleted, by label, never by value', async () => {
    const create = async (label: string, expiration: string) => {
      const res = await s.post('/api/users/tokens/create', { label, expiration });
      expect(res.status, await res.clone().text()).toBe(201);
      return res.text();
    };
    const soon = await create('hook-soon', new Date(Date.now() + 3 * 24 * 3600 * 1000).toISOString());
    const brief = await create('hook-brief', new Date(Date.now() + 2500).toISOString());
    const events = await receiver.waitFor((e) => e.some((x) => x.type === 'TokenExpiringSoon' && x.subject === 'hook-soon') && e.some((x) => x.type === 'TokenExpired' && x.subject === 'hook-brief'));
    const expiring = events.find((x) => x.type === 'TokenExpiringSoon' && x.subject === 'hook-soon')!;
    expect(expiring.data).toMatchObject({ workspace: s.workspace, kind: 'token', path: 'hook-soon', owner: 'admin', expires_at: expect.any(String) });
    const expired = events.find((x) => x.type === 'TokenExpired' && x.subject === 'hook-brief')!;
    expect(expired.data).toMatchObject({ kind: 'token', owner: 'admin' });
    for (const token of [soon, brief]) expect(JSON.stringify(events)).not.toContain(token.slice(4, 16));
  });

  it('retries after 5xx until the receiver takes the event, and the log shows every attempt', async () => {
    receiver.failNext(3, 500);
    expect((await s.post(`${ws()}/folders/create`, { name: 'retried' })).status).toBe(201);
    await receiver.waitFor((events) => events.some((e) => e.type === 'CreateFolder' && e.subject === 'f/retried'));
    const sent = receiver.requests.filter((r) => JSON.parse(r.body).subject === 'f/retried');
    expect(sent.map((r) => r.status)).toEqual([500, 500, 500, 200]);
    // The same event each time: one id, one body.
    expect(new Set(sent.map((r) => r.headers['webhook-id'])).size).toBe(1);

    // The service records an attempt once the receiver's answer is in, which can be just after the
    // receiver saw the request: wait for the log to leave 'pending'.
    const entry = await vi.waitFor(async () => {
      const log = await (await s.fetch(`${ws()}/workspaces/webhook_deliveries`)).json();
      const found = log.find((d: any) => d.subject === 'f/retried');
      if (found?.status === 'pending') throw new Error('delivery still pending');
      return found;
    }, { timeout: 15_000, interval: 25 });
    expect(entry).toMatchObject({ type: 'CreateFolder', status: 'delivered', attempt_count: 4, last_status_code: 200, last_error: null, next_attempt_at: null });
    expect(entry.attempts.map((a: any) => a.status_code)).toEqual([500, 500, 500, 200]);
    expect(entry.attempts[0].error).toMatch(/500/);
  });

  it('redelivers an event from the log on request', async () => {
    const log = await (await s.fetch(`${ws()}/workspaces/webhook_deliveries`)).json();
    const entry = log.find((d: any) => d.subject === 'f/retried');
    const before = receiver.requests.length;
    const res = await s.post(`${ws()}/workspaces/webhook_deliveries/${entry.id}/redeliver`, {});
    expect(res.status, await res.clone().text()).toBe(200);
    await receiver.waitFor(() => receiver.requests.slice(before).some((r) => r.headers['webhook-id'] === entry.id && r.status === 200));
    expect((await s.post(`${ws()}/workspaces/webhook_deliveries/evt_nosuchevent/redeliver`, {})).status).toBe(404);
  });

  it('lets only workspace admins see or change the webhook', async () => {
    expect((await s.post('/api/users/create', { username: 'dev', email: 'dev@example.com', password: 'dev-password-1' })).status).toBe(201);
    expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'dev', role: 'developer' })).status).toBe(201);
    const token = (await s.fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'dev@example.com', password: 'dev-password-1' }), token: null })).headers.get('set-cookie')!.split(';')[0];
    const asDev = (path: string, init: RequestInit = {}) => s.fetch(path, { ...init, token: null, headers: { ...(init.headers as Record<string, string>), cookie: token, origin: s.url } });
    expect((await asDev(`${ws()}/workspaces/edit_webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ webhook: 'https://example.com/x' }) })).status).toBe(403);
    expect((await asDev(`${ws()}/workspaces/webhook_deliveries`)).status).toBe(403);
    // A receiver's URL may carry a token of its own: members who are not admins do not see it.
    const seen = await (await asDev(`${ws()}/workspaces/get_settings`)).json();
    expect(seen.id).toBe(s.workspace);
    expect(JSON.stringify(seen)).not.toContain(receiver.url);
    expect(await (await s.fetch(`${ws()}/workspaces/get_settings`)).json()).toMatchObject({ webhook: receiver.url });
  });

  it('sends nothing once the webhook is turned off', async () => {
    expect((await s.post(`${ws()}/workspaces/edit_webhook`, { webhook: '' })).status).toBe(200);
    expect(await (await s.fetch(`${ws()}/workspaces/get_settings`)).json()).toMatchObject({ webhook: '', has_secret: false });
    const before = receiver.requests.length;
    expect((await s.post(`${ws()}/folders/create`, { name: 'unheard' })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.requests.slice(before).filter((r) => r.body.includes('f/unheard'))).toEqual([]);
  });
});

describe('workspace webhook without SVC_WEBHOOK_ALLOW_PRIVATE', () => {
  let s: TestServer;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    const { SVC_WEBHOOK_ALLOW_PRIVATE: _allowed, ...env } = FAST_WEBHOOKS;
    s = await startServer({ env: { ...env, SVC_WEBHOOK_GIVE_UP_HOURS: '0.0003' } });
  });
  afterAll(async () => {
    await s?.stop();
    await receiver?.close();
  });

  it('refuses loopback, private and metadata addresses, and says why in the log', async () => {
    const ws = `/api/w/${s.workspace}`;
    for (const url of [receiver.url, receiver.url.replace('127.0.0.1', 'localhost'), 'http://169.254.169.254/latest/meta-data/', 'http://10.1.2.3/', 'http://[::1]:9/']) {
      expect((await s.post(`${ws}/workspaces/edit_webhook`, { webhook: url })).status).toBe(200);
      expect((await s.post(`${ws}/folders/create`, { name: `f${Math.random().toString(36).slice(2, 8)}` })).status).toBe(201);
    }
    const deadline = Date.now() + 20_000;
    let log: any[] = [];
    while (Date.now() < deadline) {
      log = await (await s.fetch(`${ws}/workspaces/webhook_deliveries`)).json();
      if (log.length === 5 && log.every((d) => d.attempt_count > 0)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(log).toHaveLength(5);
    for (const d of log) expect(d.last_error).toMatch(/refused|turned off/);
    expect(log.filter((d) => /refused/.test(d.last_error))).not.toHaveLength(0);
    expect(receiver.requests).toEqual([]);
  });
});
