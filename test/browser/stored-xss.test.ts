import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from '../http/harness.js';
import { launchBrowser, type BrowserSession } from './browser.js';

/**
 * Issue 15, replayed in Chromium: a workspace member's script answers its sync webhook with HTML
 * and JavaScript that, opened by a logged-in user, reads the session and uses it against the API
 * (here: starting a job as the victim). Served sandboxed, the page's script never runs, and the
 * session reaches nothing.
 */
let s: TestServer;
let browser: BrowserSession;
const ws = () => `/api/w/${s.workspace}`;

const ATTACK = `
<h1 id="title">Quarterly report</h1>
<script>
  document.title = 'ran: ' + document.cookie;
  fetch('/api/users/whoami').then((r) => r.text()).then((me) =>
    fetch('/api/w/main/jobs/run/p/f/xss/exfil', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ me }) }));
</script>`;

beforeAll(async () => {
  [s, browser] = await Promise.all([startServer(), launchBrowser()]);
  expect((await s.post('/api/users/create', { username: 'vic', email: 'vic@example.com', password: 'vic-password' })).status).toBe(201);
  expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'vic', role: 'admin' })).status).toBe(201);
  await createScript(s, 'f/xss/exfil', 'bun', 'export function main(me) { return me ?? null; }');
  await createScript(s, 'f/xss/report', 'bun', `export function main() { return { svc_content_type: 'text/html', result: ${JSON.stringify(ATTACK)} }; }`);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

describe('stored XSS through a sync webhook', () => {
  it('no longer reaches the session or the API', async () => {
    const { page } = await browser.newPage();
    await page.goto(`${s.url}/login?next=${encodeURIComponent('/tokens')}`);
    await page.fill('#email', 'vic@example.com');
    await page.fill('#password', 'vic-password');
    await page.click('button[type=submit]');
    await page.waitForURL(`${s.url}/tokens`);

    const apiCalls: string[] = [];
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith('/api/') && !path.includes('/jobs/run_wait_result/')) apiCalls.push(`${request.method()} ${path}`);
    });
    const response = await page.goto(`${s.url}${ws()}/jobs/run_wait_result/p/f/xss/report`);
    expect(response?.headers()['content-security-policy']).toBe('sandbox');
    // The attacker's HTML is shown as a document...
    await expect(page.locator('#title').textContent()).resolves.toBe('Quarterly report');
    // ...but its script never ran: it would have renamed the page while the document loaded, and
    // started its first API call then too. No job ran as the victim.
    expect(await page.title()).not.toMatch(/^ran:/);
    expect(apiCalls).toEqual([]);
    const runs = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=f/xss/exfil`)).json();
    expect(runs).toEqual([]);
    await page.close();
  }, 60_000);
});
