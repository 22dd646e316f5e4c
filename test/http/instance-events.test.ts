import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startServer, type TestServer } from './harness.js';
import { FAST_WEBHOOKS, startReceiver, type Receiver } from './webhook-receiver.js';

/**
 * The instance events webhook (spec 6.2) in both shells: set by an instance admin, it hears users
 * added, invited to a workspace, and joining one by accepting an invitation; signed like the
 * workspace webhook. Invitations are listed, accepted and declined by the invited user.
 */

let s: TestServer;
let receiver: Receiver;
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function sessionOf(email: string, password: string): Promise<(path: string, init?: RequestInit) => Promise<Response>> {
  const login = await s.fetch('/api/auth/login', { ...json({ email, password }), token: null });
  expect(login.status).toBe(200);
  const cookie = login.headers.get('set-cookie')!.split(';')[0];
  return (path, init = {}) => s.fetch(path, { ...init, token: null, headers: { ...(init.headers as Record<string, string>), cookie, origin: s.url } });
}

beforeAll(async () => {
  receiver = await startReceiver();
  s = await startServer({ env: FAST_WEBHOOKS });
});
afterAll(async () => {
  await s?.stop();
  await receiver?.close();
});

describe('instance events webhook', () => {
  it('is set by an instance admin only, and shown without its secret', async () => {
    expect((await s.post('/api/settings/instance_events_webhook', { url: 'javascript:alert(1)' })).status).toBe(400);
    const res = await s.post('/api/settings/instance_events_webhook', { url: receiver.url, secret });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await (await s.fetch('/api/settings/instance_events_webhook')).json()).toEqual({ url: receiver.url, has_secret: true });

    expect((await s.post('/api/users/create', { username: 'wsadmin', email: 'wsadmin@example.com', password: 'wsadmin-password' })).status).toBe(201);
    expect((await s.post(`/api/w/${s.workspace}/workspaces/add_user`, { username: 'wsadmin', role: 'admin' })).status).toBe(201);
    const asWsAdmin = await sessionOf('wsadmin@example.com', 'wsadmin-password');
    expect((await asWsAdmin('/api/settings/instance_events_webhook', json({ url: 'https://example.com/' }))).status).toBe(403);
    expect((await asWsAdmin('/api/settings/instance_events_webhook')).status).toBe(403);
  });

  it('announces a user added, invited, and joining by accepting; a declined invitation joins nobody', async () => {
    expect((await s.post('/api/users/create', { username: 'ivy', email: 'ivy@example.com', password: 'ivy-password-1' })).status).toBe(201);
    expect((await s.post('/api/users/create', { username: 'jay', email: 'jay@example.com', password: 'jay-password-1' })).status).toBe(201);
    const ws = `/api/w/${s.workspace}`;
    const invited = await s.post(`${ws}/workspaces/invite_user`, { email: 'IVY@example.com', role: 'operator' });
    expect(invited.status, await invited.clone().text()).toBe(201);
    expect((await s.post(`${ws}/workspaces/invite_user`, { username: 'jay' })).status).toBe(201);
    expect((await s.post(`${ws}/workspaces/invite_user`, { username: 'jay' })).status).toBe(409);
    expect((await s.post(`${ws}/workspaces/invite_user`, { username: 'nobody' })).status).toBe(400);
    expect((await s.post(`${ws}/workspaces/invite_user`, { username: 'jay', email: 'jay@example.com' })).status).toBe(400);
    expect((await (await s.fetch(`${ws}/workspaces/list_pending_invites`)).json()).map((i: any) => i.username).sort()).toEqual(['ivy', 'jay']);

    const asIvy = await sessionOf('ivy@example.com', 'ivy-password-1');
    expect(await (await asIvy('/api/users/list_invites')).json()).toEqual([expect.objectContaining({ workspace_id: s.workspace, role: 'operator', invited_by: 'admin' })]);
    // Not a member before accepting.
    expect((await asIvy(`${ws}/scripts/list`)).status).toBe(403);
    const accepted = await asIvy('/api/users/accept_invite', json({ workspace_id: s.workspace }));
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    expect(await accepted.json()).toMatchObject({ username: 'ivy', role: 'operator' });
    expect((await asIvy(`${ws}/scripts/list`)).status).toBe(200);
    expect(await (await asIvy('/api/users/list_invites')).json()).toEqual([]);
    expect((await asIvy('/api/users/accept_invite', json({ workspace_id: s.workspace }))).status).toBe(404);

    const asJay = await sessionOf('jay@example.com', 'jay-password-1');
    expect((await asJay('/api/users/decline_invite', json({ workspace_id: s.workspace }))).status).toBe(200);
    expect((await asJay(`${ws}/scripts/list`)).status).toBe(403);

    const events = await receiver.waitFor((e) => e.some((x) => x.type === 'UserJoinedWorkspace' && x.subject === 'ivy') && e.some((x) => x.type === 'UserInvited' && x.subject === 'jay'));
    const find = (type: string, subject: string) => events.find((e) => e.type === type && e.subject === subject);
    expect(find('UserAdded', 'ivy')).toMatchObject({ specversion: '1.0', data: { kind: 'user', path: 'ivy', user: 'admin', email: 'ivy@example.com' } });
    expect(find('UserInvited', 'ivy')).toMatchObject({ data: { workspace: s.workspace, role: 'operator', user: 'admin' } });
    expect(find('UserJoinedWorkspace', 'ivy')).toMatchObject({ data: { workspace: s.workspace, role: 'operator', user: 'ivy' } });
    expect(find('UserJoinedWorkspace', 'jay')).toBeUndefined();
    expect(find('UserAdded', 'ivy')!.source).toMatch(/\/api$/);
    for (const request of receiver.requests) {
      expect(new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).toBeTruthy();
      expect(request.body).not.toContain('password');
    }

    const log = await (await s.fetch('/api/settings/instance_events_deliveries')).json();
    expect(log.map((d: any) => d.type)).toEqual(expect.arrayContaining(['UserAdded', 'UserInvited', 'UserJoinedWorkspace']));
  });
});
