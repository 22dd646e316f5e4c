import { beforeAll, describe, expect, it } from 'vitest';
import { sweepTokens } from '../../../functions/core/identity/token-expiry.js';
import type { EmailMessage, EmailSender } from '../../../functions/ports.js';
import { inProcessService, json, type InProcessService } from './harness.js';

/**
 * The token lifecycle of spec 3 and 5.8 in-process: notices 7 days ahead and after deletion, once
 * each, badges in the listing, the outbox when no mail is set up. The sweep is the core's, called
 * as the shells' timer and schedule call it; time passes by the service's clock.
 * test/http/token-expiry.test.ts runs the same with the shells' own timers, SMTP included.
 */

const DAY_MS = 24 * 3600 * 1000;

interface Notice {
  subject: string;
  text: string;
}

async function withAlice(s: InProcessService) {
  expect((await s.post('/api/users/create', { username: 'alice', email: 'alice@example.com', password: 'alice-password' })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { ...json({ email: 'alice@example.com', password: 'alice-password' }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  // A token that never expires: the session does after 7 days, and these tests move weeks ahead.
  const forever = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'forever' }), token: null, headers: { cookie, 'content-type': 'application/json' } })).text();
  const asAlice = (path: string, init: RequestInit = {}) => s.fetch(path, { ...init, token: forever });
  const create = async (label: string, expiration?: string) => {
    const res = await asAlice('/api/users/tokens/create', json({ label, ...(expiration ? { expiration } : {}) }));
    expect(res.status).toBe(201);
    return res.text();
  };
  return { asAlice, create };
}

describe('token expiry, notices in the outbox', () => {
  let s: InProcessService;
  let alice: Awaited<ReturnType<typeof withAlice>>;
  beforeAll(async () => {
    s = await inProcessService();
    alice = await withAlice(s);
  });
  const inDays = (days: number) => new Date(s.clock.now().getTime() + days * DAY_MS).toISOString();
  const notices = async (): Promise<Notice[]> => (await alice.asAlice('/api/users/notifications')).json();

  it('badges tokens by how soon they expire, and tells the owner once, 7 days ahead', async () => {
    const soon = await alice.create('deploy hook', inDays(3));
    await alice.create('monthly report', inDays(20));
    const listed = await (await alice.asAlice('/api/users/tokens/list')).json();
    const badges = listed.filter((t: { label: string }) => t.label !== 'session');
    expect(Object.fromEntries(badges.map((t: { label: string; expiry_badge: string | null }) => [t.label, t.expiry_badge]))).toEqual({
      'deploy hook': 'within_7_days',
      'monthly report': 'within_30_days',
      forever: null,
    });

    await sweepTokens(s.deps);
    const told = await notices();
    const aboutSoon = told.filter((n) => n.subject.includes('deploy hook'));
    expect(aboutSoon).toHaveLength(1);
    expect(aboutSoon[0].subject).toMatch(/expires on/);
    expect(told.some((n) => n.subject.includes('monthly report') || n.subject.includes('forever'))).toBe(false);
    expect(JSON.stringify(told)).not.toContain(soon);

    // Later sweeps do not repeat it; the monthly one is told once it is 7 days out.
    await sweepTokens(s.deps);
    expect((await notices()).filter((n) => n.subject.includes('deploy hook'))).toHaveLength(1);
    s.clock.advance(14 * DAY_MS);
    await sweepTokens(s.deps);
    expect((await notices()).filter((n) => n.subject.includes('monthly report'))).toHaveLength(1);
    // A notice goes to its addressee only.
    expect(await (await s.fetch('/api/users/notifications')).json()).toEqual([]);
  });

  it('refuses an expired token at once, then deletes it and tells its owner', async () => {
    const brief = await alice.create('brief', new Date(s.clock.now().getTime() + 2000).toISOString());
    expect((await s.fetch('/api/users/whoami', { token: brief })).status).toBe(200);
    s.clock.advance(2100);
    expect((await s.fetch('/api/users/whoami', { token: brief })).status).toBe(401);

    expect(await sweepTokens(s.deps)).toMatchObject({ deleted: expect.any(Number) });
    await sweepTokens(s.deps);
    const told = (await notices()).filter((x) => /"brief".*expired and was deleted/.test(x.subject));
    expect(told).toHaveLength(1);
    const listed = await (await alice.asAlice('/api/users/tokens/list')).json();
    expect(listed.map((t: { label: string }) => t.label)).not.toContain('brief');
  });
});

describe('token expiry, notices by email', () => {
  it('mails the owner at the address of their account, and keeps nothing in the outbox', async () => {
    const sent: EmailMessage[] = [];
    const email: EmailSender = { send: async (m) => void sent.push(m) };
    const s = await inProcessService({ email });
    const res = await s.post('/api/users/tokens/create', { label: 'nightly', expiration: new Date(s.clock.now().getTime() + 2 * DAY_MS).toISOString() });
    expect(res.status).toBe(201);
    await sweepTokens(s.deps);
    expect(sent).toHaveLength(1);
    expect(sent[0].to).toBe('admin@svc.local');
    expect(sent[0].subject).toMatch(/^Your svc token "nightly" expires on \d{4}-\d\d-\d\d$/);
    expect(await (await s.fetch('/api/users/notifications')).json()).toEqual([]);
  });
});
