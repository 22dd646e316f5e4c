import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessService, json, type InProcessService } from './harness.js';

/**
 * The workspace's chat connections (README: Chat approvals): only a workspace admin, as a person,
 * connects a Slack app or a Teams bot; its secrets are never shown again and are kept when the
 * connection is edited without them; bad input is a 400 that stores nothing.
 */

let s: InProcessService;
const ws = '/api/w/main';
let devToken: string;

beforeAll(async () => {
  s = await inProcessService();
  await s.post('/api/users/create', { username: 'dev', email: 'dev@example.com', password: 'dev-password-1' });
  await s.post(`${ws}/workspaces/add_user`, { username: 'dev', role: 'developer' });
  const login = await s.fetch('/api/auth/login', { ...json({ email: 'dev@example.com', password: 'dev-password-1' }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  devToken = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'dev' }), token: null, headers: { cookie, 'content-type': 'application/json' } })).text();
});

const list = async (token?: string) => (await s.fetch(`${ws}/workspaces/chat_connections`, token ? { token } : {})).json();

describe('chat connections', () => {
  it('keeps secrets sealed and unseen, and keeps them when edited without them', async () => {
    const created = await s.post(`${ws}/workspaces/chat_connections/ops`, { platform: 'slack', bot_token: 'xoxb-secret-token', signing_secret: 'sign-me', api_url: 'https://slack.example/api/' });
    expect(created.status).toBe(200);
    expect(await created.json()).toEqual({ name: 'ops', platform: 'slack', api_url: 'https://slack.example/api', has_bot_token: true, has_signing_secret: true, updated_by: 'admin' });
    const edited = await s.post(`${ws}/workspaces/chat_connections/ops`, { platform: 'slack', api_url: 'https://slack.com/api' });
    expect(edited.status).toBe(200);
    const shown = JSON.stringify(await list(devToken));
    expect(shown).toContain('https://slack.com/api');
    expect(shown).not.toContain('xoxb-secret-token');
    expect(shown).not.toContain('sign-me');
    // Who re-points the workspace's approvals is on the instance's audit log, without the secrets.
    const audit = await (await s.fetch('/api/audit/list')).json();
    expect(audit).toEqual(expect.arrayContaining([expect.objectContaining({ event: 'chat_connection.set', workspace_id: 'main', name: 'ops', by: 'admin', api_url: 'https://slack.com/api' })]));
    expect(JSON.stringify(audit)).not.toContain('sign-me');
    // Switching the platform needs the new platform's secrets.
    const switched = await s.post(`${ws}/workspaces/chat_connections/ops`, { platform: 'teams', app_id: 'a', team_id: 't', team_name: 'Ops' });
    expect(switched.status).toBe(400);
    expect((await switched.json()).error.message).toContain('app_password');
  });

  it('refuses a developer, a new connection without its secrets, unknown fields, bad names and URLs, and stores nothing', async () => {
    const before = await list();
    const byDev = await s.fetch(`${ws}/workspaces/chat_connections/mine`, { ...json({ platform: 'slack', bot_token: 'x', signing_secret: 'y' }), token: devToken });
    expect(byDev.status).toBe(403);
    expect((await s.post(`${ws}/workspaces/chat_connections/nosecret`, { platform: 'slack', bot_token: 'x' })).status).toBe(400);
    expect((await s.post(`${ws}/workspaces/chat_connections/extra`, { platform: 'slack', bot_token: 'x', signing_secret: 'y', jwks: 'https://evil.example' })).status).toBe(400);
    for (const name of ['Bad%20Name', 'Ops', '-ops', 'x'.repeat(51)]) {
      const badName = await s.post(`${ws}/workspaces/chat_connections/${name}`, { platform: 'slack', bot_token: 'x', signing_secret: 'y' });
      expect(badName.status, name).toBe(400);
      // The error names the field that is wrong: the connection's name in the URL, not the body.
      expect((await badName.json()).error, name).toEqual({ code: 'invalid_request', field: 'name', message: 'name: lowercase letters, digits, _ and - (at most 50)' });
    }
    expect((await s.post(`${ws}/workspaces/chat_connections/badurl`, { platform: 'slack', bot_token: 'x', signing_secret: 'y', api_url: 'file:///etc/passwd' })).status).toBe(400);
    expect((await s.post(`${ws}/workspaces/chat_connections/nope`, { platform: 'discord' })).status).toBe(400);
    expect(await list()).toEqual(before);
    const deleteByDev = await s.fetch(`${ws}/workspaces/chat_connections/ops`, { method: 'DELETE', token: devToken });
    expect(deleteByDev.status).toBe(403);
    expect((await s.fetch(`${ws}/workspaces/chat_connections/ops`, { method: 'DELETE' })).status).toBe(200);
    expect((await s.fetch(`${ws}/workspaces/chat_connections/ops`, { method: 'DELETE' })).status).toBe(404);
  });
});
