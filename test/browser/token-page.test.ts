import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../http/harness.js';
import { launchBrowser, type BrowserSession, type WatchedPage } from './browser.js';

/**
 * The token page in Chromium against the real local service (spec 2.8, 5.2, 5.8): a user logs in
 * through the login page, sees their tokens with colour-coded expiry badges, creates one (its value
 * shown once, and it works), and deletes one (it stops working). No console error, CSP violation
 * or request off loopback.
 */

let s: TestServer;
let browser: BrowserSession;
const opened: WatchedPage[] = [];

beforeAll(async () => {
  [s, browser] = await Promise.all([startServer(), launchBrowser()]);
  expect((await s.post('/api/users/create', { username: 'dora', email: 'dora@example.com', password: 'dora-password' })).status).toBe(201);
});
afterEach(async () => {
  const problems = opened.flatMap((w) => w.problems.map((p) => `${w.page.url()}: ${p}`));
  await Promise.all(opened.splice(0).map((w) => w.page.close().catch(() => undefined)));
  expect(problems, 'console errors, CSP violations or external requests').toEqual([]);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const inDays = (days: number) => new Date(Date.now() + days * 24 * 3600 * 1000).toISOString();

describe('the token page', () => {
  it('sends a visitor without a session to the login page and back', async () => {
    const watched = await browser.newPage();
    opened.push(watched);
    const { page } = watched;
    await page.goto(`${s.url}/tokens`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.fill('#email', 'dora@example.com');
    await page.fill('#password', 'dora-password');
    await page.click('button[type=submit]');
    await page.waitForURL(`${s.url}/tokens`);
    await expect(page.locator('h1').textContent()).resolves.toBe('API tokens');
    await expect(page.locator('body').textContent()).resolves.toContain('Signed in as dora');
  }, 60_000);

  it('badges tokens by their expiry, creates one shown once, and deletes one', async () => {
    const watched = await browser.newPage();
    opened.push(watched);
    const { page } = watched;
    // The browser session from the previous test: dora's tokens, made through the API with her cookie.
    const cookies = await browser.context.cookies(s.url);
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const make = async (label: string, expiration?: string) => {
      const res = await s.fetch('/api/users/tokens/create', { method: 'POST', token: null, headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ label, expiration }) });
      expect(res.status).toBe(201);
      return res.text();
    };
    await make('hook', inDays(3));
    await make('report', inDays(20));
    const keeper = await make('keeper');

    await page.goto(`${s.url}/tokens`);
    const row = (label: string) => page.locator('tbody tr', { hasText: label });
    await row('keeper').waitFor();
    await expect(row('hook').locator('.badge').getAttribute('class')).resolves.toContain('badge-week');
    await expect(row('hook').locator('.badge').textContent()).resolves.toBe('expires within 7 days');
    await expect(row('report').locator('.badge').getAttribute('class')).resolves.toContain('badge-month');
    await expect(row('keeper').locator('.badge').count()).resolves.toBe(0);
    // Week and month badges look different, as colour-coded badges should.
    const colour = (label: string) => row(label).locator('.badge').evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(await colour('hook')).not.toBe(await colour('report'));

    await page.fill('#label', 'from the page');
    await page.fill('#scopes', 'jobs:read');
    await page.click('#create button[type=submit]');
    await page.locator('#created').waitFor();
    const value = (await page.locator('#new-token').textContent())!;
    expect(value).toMatch(/^svc_/);
    await row('from the page').waitFor();
    await expect(row('from the page').textContent()).resolves.toContain('jobs:read');
    expect((await s.fetch('/api/users/whoami', { token: value })).status).toBe(200);
    // Shown once: the list holds its prefix only.
    expect(await page.locator('tbody').textContent()).not.toContain(value);

    page.on('dialog', (dialog) => void dialog.accept());
    await row('keeper').locator('button', { hasText: 'Delete' }).click();
    await row('keeper').waitFor({ state: 'detached' });
    expect((await s.fetch('/api/users/whoami', { token: keeper })).status).toBe(401);
  }, 60_000);
});
