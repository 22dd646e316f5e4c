import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

/** Issue 15: password guessing is limited per account and per client address. */
let s: TestServer;
const login = (email: string, password: string) =>
  s.fetch('/api/auth/login', { method: 'POST', token: null, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });

beforeAll(async () => {
  s = await startServer();
  for (const name of ['gina', 'hal']) {
    expect((await s.post('/api/users/create', { username: name, email: `${name}@example.com`, password: `${name}-password` })).status).toBe(201);
  }
});
afterAll(() => s?.stop());

describe('login rate limit', () => {
  it('locks an account for a while after 20 wrong passwords: 429 with Retry-After, even for the right one', async () => {
    for (let i = 0; i < 20; i++) {
      // Email and username name the same account: both forms count together.
      expect((await login(i % 2 ? 'gina@example.com' : 'gina', `wrong-${i}`)).status).toBe(401);
    }
    const locked = await login('gina@example.com', 'gina-password');
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(60);
    expect((await locked.json()).error.code).toBe('too_many_login_attempts');
    expect(locked.headers.get('set-cookie')).toBeNull();

    // Another person on the same address is not locked out by it.
    expect((await login('hal@example.com', 'hal-password')).status).toBe(200);

    const audit = await (await s.fetch('/api/audit/list')).json();
    expect(audit).toContainEqual(expect.objectContaining({ event: 'login_locked', scope: 'account', subject: 'gina' }));
    expect(JSON.stringify(audit)).not.toContain('wrong-');
  });

  it('limits one client address guessing across many accounts', async () => {
    let status = 0;
    for (let i = 0; i < 100 && status !== 429; i++) status = (await login(`nobody${i}@example.com`, 'whatever')).status;
    expect(status).toBe(429);
    const res = await login('hal@example.com', 'hal-password');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('keeps the audit log for instance admins only', async () => {
    expect((await s.fetch('/api/audit/list', { token: null })).status).toBe(401);
  });
});
