import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { startServer, type TestServer } from './harness.js';

/**
 * The token lifecycle of spec 3 and 5.8 over real HTTP: the owner hears 7 days before a token
 * expires and again once it expired and was deleted; the listing badges tokens by how soon they
 * expire. The sweep runs every second here (SVC_TOKEN_SWEEP_SECONDS), as the timer locally and the
 * EventBridge schedule on AWS run it. Without mail set up, notices wait in the outbox the API lists.
 */

const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const inDays = (days: number) => new Date(Date.now() + days * 24 * 3600 * 1000).toISOString();

interface Notice {
  subject: string;
  text: string;
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('token expiry, notices in the outbox', () => {
  let s: TestServer;
  let alice: string;
  beforeAll(async () => {
    s = await startServer({ env: { SVC_TOKEN_SWEEP_SECONDS: '1' } });
    expect((await s.post('/api/users/create', { username: 'alice', email: 'alice@example.com', password: 'alice-password' })).status).toBe(201);
    const login = await s.fetch('/api/auth/login', { ...json({ email: 'alice@example.com', password: 'alice-password' }), token: null });
    alice = (login.headers.get('set-cookie') ?? '').split(';')[0];
  });
  afterAll(async () => {
    if (process.env.SVC_TEST_DEBUG) console.log(s.output());
    await s?.stop();
  });

  const asAlice = (path: string, init: RequestInit = {}) => s.fetch(path, { ...init, token: null, headers: { ...(init.headers as Record<string, string>), cookie: alice } });
  const create = async (label: string, expiration?: string) => {
    const res = await asAlice('/api/users/tokens/create', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ label, ...(expiration ? { expiration } : {}) }) });
    expect(res.status).toBe(201);
    return res.text();
  };
  const notices = async (): Promise<Notice[]> => (await asAlice('/api/users/notifications')).json();

  it('badges tokens by how soon they expire, and tells the owner once, 7 days ahead', async () => {
    const soon = await create('deploy hook', inDays(3));
    await create('monthly report', inDays(20));
    await create('forever');
    const listed = await (await asAlice('/api/users/tokens/list')).json();
    expect(Object.fromEntries(listed.map((t: { label: string; expiry_badge: string | null }) => [t.label, t.expiry_badge]))).toEqual({
      'deploy hook': 'within_7_days',
      'monthly report': 'within_30_days',
      forever: null,
    });

    const told = await eventually(notices, (n) => n.some((x) => x.subject.includes('deploy hook')));
    const aboutSoon = told.filter((n) => n.subject.includes('deploy hook'));
    expect(aboutSoon).toHaveLength(1);
    expect(aboutSoon[0].subject).toMatch(/expires on/);
    // Only the 7-day window brings a notice, and a notice never holds the token itself.
    expect(told.some((n) => n.subject.includes('monthly report') || n.subject.includes('forever'))).toBe(false);
    expect(JSON.stringify(told)).not.toContain(soon);

    // Later sweeps do not repeat it.
    await new Promise((r) => setTimeout(r, 2500));
    expect((await notices()).filter((n) => n.subject.includes('deploy hook'))).toHaveLength(1);
    // A notice goes to its addressee only.
    expect(await (await s.fetch('/api/users/notifications')).json()).toEqual([]);
  });

  it('refuses an expired token at once, then deletes it and tells its owner', async () => {
    const brief = await create('brief', new Date(Date.now() + 2000).toISOString());
    expect((await s.fetch('/api/users/whoami', { token: brief })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2100));
    expect((await s.fetch('/api/users/whoami', { token: brief })).status).toBe(401);

    const told = await eventually(notices, (n) => n.some((x) => /"brief".*expired and was deleted/.test(x.subject)));
    expect(told.filter((n) => /"brief".*expired and was deleted/.test(n.subject))).toHaveLength(1);
    const listed = await (await asAlice('/api/users/tokens/list')).json();
    expect(listed.map((t: { label: string }) => t.label)).not.toContain('brief');
  });
});

/** The Subject header, unfolded and with its RFC 2047 Q-encoded words decoded. */
function subjectOf(mail: string): string {
  const header = /^Subject: (.*(?:\r?\n[ \t].*)*)/m.exec(mail)?.[1] ?? '';
  return header
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?Q\?(.*?)\?=/gi, (_, words: string) =>
      Buffer.from(words.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (__, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8'),
    )
    .replace(/\r?\n[ \t]/g, '');
}

// SMTP is the local shell's mail (SES is the AWS shell's: test/aws/ses-email-sender.test.ts).
describe.skipIf(process.env.SVC_TEST_SHELL === 'aws')('token expiry, notices by email', () => {
  let s: TestServer;
  let smtp: SMTPServer;
  const mails: { to: string[]; data: string }[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), data: Buffer.concat(chunks).toString('utf8') });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    s = await startServer({ env: { SVC_TOKEN_SWEEP_SECONDS: '1', SVC_SMTP_URL: `smtp://127.0.0.1:${port}`, SVC_SMTP_FROM: 'svc <svc@example.com>' } });
  });
  afterAll(async () => {
    await s?.stop();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  it("mails the owner at the address of their account, and keeps nothing in the outbox", async () => {
    const res = await s.post('/api/users/tokens/create', { label: 'nightly', expiration: inDays(2) });
    expect(res.status).toBe(201);
    const mail = await eventually(async () => mails.find((m) => m.data.includes('nightly')), (m) => m !== undefined);
    expect(mail?.to).toEqual(['admin@svc.local']);
    expect(subjectOf(mail!.data)).toMatch(/^Your svc token "nightly" expires on \d{4}-\d\d-\d\d$/);
    expect(mail?.data).toMatch(/^From: svc <svc@example.com>/m);
    expect(await (await s.fetch('/api/users/notifications')).json()).toEqual([]);
  });
});
