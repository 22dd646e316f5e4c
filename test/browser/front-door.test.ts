import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from '../http/harness.js';
import { launchBrowser, type BrowserSession, type WatchedPage } from './browser.js';

/**
 * Issue 36's front door in Chromium: a new person opens `/`, lands on the login page, signs in as
 * the bootstrap admin with the admin token, and arrives at the workspace home, which shows the flow
 * run waiting for their approval (linked to its run page) and recent runs — at 390 px too, with no
 * CSP violation. Then runs that read well: the run list shows top-level runs unless asked for all,
 * an item page names its language as people do and lists every URL form of spec 4.1.
 */

let s: TestServer;
let browser: BrowserSession;
const opened: WatchedPage[] = [];
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

beforeAll(async () => {
  [s, browser] = await Promise.all([startServer(), launchBrowser()]);
  const flow = await s.post(`${ws()}/flows/create`, {
    path: 'u/admin/needs_ok',
    summary: 'Needs an OK',
    value: { modules: [{ id: 'ask', value: { type: 'rawscript', language: 'bash', content: 'echo \'"ok?"\'', input_transforms: {} }, suspend: { required_events: 1 } }] },
    schema: { type: 'object', properties: {}, required: [] },
  });
  expect(flow.status, await flow.clone().text()).toBe(201);
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

async function waitForSuspended(id: string) {
  for (;;) {
    const runs = (await (await s.fetch(`${ws()}/jobs/runs?path=u/admin/needs_ok&top_level=1`)).json()) as { runs: { id: string; status: string }[] };
    if (runs.runs.find((r) => r.id === id)?.status === 'suspended') return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('front door in Chromium', () => {
  it('goes from / to the login page, signs in with the admin token and shows the home with what awaits approval', { timeout: 60_000 }, async () => {
    const started = await s.fetch(`${ws()}/jobs/run/f/u/admin/needs_ok`, json({}));
    expect(started.status).toBe(201);
    const id = await started.text();
    await waitForSuspended(id);

    const watched = await browser.newPage();
    opened.push(watched);
    const { page } = watched;
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(s.url + '/');
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByText('Sign in with an API token').click();
    await page.getByLabel('API token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await expect.poll(() => page.locator('#message').textContent()).toContain('unknown or expired');
    // Chromium logs the refused sign-in's 401 as a console error: expected here, and only here.
    const refused = watched.problems.indexOf('console error: Failed to load resource: the server responded with a status of 401 (Unauthorized)');
    expect(refused).toBeGreaterThanOrEqual(0);
    watched.problems.splice(refused, 1);
    await page.getByLabel('API token').fill(s.token);
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await page.waitForURL((url) => url.pathname === `/w/${s.workspace}`);

    const awaiting = page.getByRole('region', { name: 'Awaiting your approval' });
    await expect.poll(() => awaiting.getByRole('link', { name: 'u/admin/needs_ok' }).getAttribute('href')).toBe(`/w/${s.workspace}/run/${id}`);
    const recent = page.getByRole('table', { name: 'Recent runs' });
    expect(await recent.getByRole('link', { name: 'u/admin/needs_ok' }).count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Quick links' }).getByRole('link', { name: 'Approvals inbox' }).getAttribute('href')).toBe('/approvals');
    // Fits 390 px: nothing wider than the viewport.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await awaiting.getByRole('link', { name: 'u/admin/needs_ok' }).click();
    await page.waitForURL((url) => url.pathname === `/w/${s.workspace}/run/${id}`);
  });
});

async function signedInPage(path: string) {
  const watched = await browser.newPage();
  opened.push(watched);
  const { page } = watched;
  await page.goto(s.url + path);
  if (new URL(page.url()).pathname === '/login') {
    await page.getByText('Sign in with an API token').click();
    await page.getByLabel('API token').fill(s.token);
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await page.waitForURL((url) => url.pathname !== '/login');
  }
  return page;
}

/** A new page signing in with the admin token on the login page of `next`, once it has left the login. */
async function signInWithNext(next: string) {
  const watched = await browser.newPage();
  opened.push(watched);
  const { page } = watched;
  await page.goto(`${s.url}/login?next=${encodeURIComponent(next)}`);
  await page.getByText('Sign in with an API token').click();
  await page.getByLabel('API token').fill(s.token);
  await page.getByRole('button', { name: 'Sign in with token' }).click();
  await page.waitForURL((url) => url.pathname !== '/login');
  return page;
}

describe('the login page after signing in', () => {
  it('goes only to a path on this site, whatever `next` says', { timeout: 60_000 }, async () => {
    const here = new URL(s.url).origin;
    // A backslash is a slash to the browser's URL parser: "/\host" is "//host", another site.
    for (const next of ['//evil.example/x', '/\\evil.example/x', '/\\/evil.example/x', 'https://evil.example/x', '/tokens']) {
      const page = await signInWithNext(next);
      expect(new URL(page.url()).origin, next).toBe(here);
      expect(new URL(page.url()).pathname, next).toBe(next === '/tokens' ? '/tokens' : `/w/${s.workspace}`);
    }
  });
});

describe('the login page and the API', () => {
  it('never sends whoever signs in to a URL that runs a job', { timeout: 60_000 }, async () => {
    // Attack: a link to the login page whose `next` is jobs/run_wait_result/...?payload=: once
    // signed in, the page's own navigation carried the new session, same-origin, and ran the job.
    const hash = await createScript(s, 'u/admin/by_link', 'bash', 'echo ran');
    const runs = async () => ((await (await s.fetch(`${ws()}/jobs/list?script_path_exact=u/admin/by_link`)).json()) as unknown[]).length;
    const payload = Buffer.from('{}').toString('base64url');
    for (const next of [`/api/w/${s.workspace}/jobs/run_wait_result/p/u/admin/by_link?payload=${payload}`, `/%61pi/w/${s.workspace}/jobs/run_wait_result/h/${hash}`]) {
      const page = await signInWithNext(next);
      await page.waitForLoadState();
      expect(await runs(), next).toBe(0);
      expect(new URL(page.url()).pathname, next).toBe(`/w/${s.workspace}`);
    }
  });
});

describe('logging out', () => {
  it('ends the session on the server from every console page, and opens the login page', { timeout: 60_000 }, async () => {
    // Attack: a console with no way out. A person on a shared computer could only close the tab,
    // and their session stayed valid for 7 days to whoever opened the browser next.
    const page = await signedInPage(`/w/${s.workspace}/runs`);
    const session = (await browser.context.cookies(s.url)).find((c) => c.name === 'svc_session')!.value;
    const asSession = () => s.fetch('/api/users/whoami', { token: null, headers: { cookie: `svc_session=${session}` } });
    expect((await asSession()).status).toBe(200);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL((url) => url.pathname === '/login');
    expect((await browser.context.cookies(s.url)).find((c) => c.name === 'svc_session')).toBeUndefined();
    // Not only the cookie: the session itself is gone, for a copy of it too.
    expect((await asSession()).status).toBe(401);
    await page.goto(`${s.url}/w/${s.workspace}/runs`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });
});

describe('runs that read well', () => {
  it('lists a flow run without its steps until "Show flow steps and sub-flows" is ticked', { timeout: 60_000 }, async () => {
    const flow = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/two_steps',
      summary: 'two steps',
      value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bash', content: 'echo 1', input_transforms: {} } }, { id: 'b', value: { type: 'rawscript', language: 'bash', content: 'echo 2', input_transforms: {} } }] },
      schema: { type: 'object', properties: {}, required: [] },
    });
    expect(flow.status, await flow.clone().text()).toBe(201);
    const id = await (await s.fetch(`${ws()}/jobs/run/f/u/admin/two_steps`, json({}))).text();
    expect((await waitForJob(s, id)).success).toBe(true);
    const page = await signedInPage(`/w/${s.workspace}/runs?path=u/admin/two_steps`);
    const shown = async () => {
      await page.locator('#rows tr').first().waitFor();
      return page.locator('#rows tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.id));
    };
    expect(await shown()).toEqual([id]);
    await page.getByLabel('Show flow steps and sub-flows').check();
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/all=1/);
    await expect.poll(async () => (await shown()).length).toBeGreaterThan(1);
    expect(await page.getByLabel('Show flow steps and sub-flows').isChecked()).toBe(true);
  });

  it('names a script\'s language as people do and lists every URL form of spec 4.1, by path and by version', { timeout: 60_000 }, async () => {
    const hash = await createScript(s, 'u/admin/typed', 'nativets', 'export async function main(x: number) { return x * 2; }');
    const page = await signedInPage(`/w/${s.workspace}/item/u/admin/typed`);
    const main = page.locator('main');
    expect(await main.textContent()).not.toContain('nativets');
    await expect(page.getByRole('heading', { name: /Source/ }).textContent()).resolves.toContain('TypeScript');
    const curls = (await page.locator('pre.curl').allTextContents()).join('\n');
    for (const kind of ['run', 'run_wait_result', 'run_and_stream']) {
      expect(curls).toContain(`/api/w/${s.workspace}/jobs/${kind}/p/u/admin/typed`);
      expect(curls).toContain(`/api/w/${s.workspace}/jobs/${kind}/h/${hash}`);
    }
    const flowPage = await signedInPage(`/w/${s.workspace}/item/u/admin/needs_ok`);
    const [latest] = (await (await s.fetch(`${ws()}/flows/history/p/u/admin/needs_ok`)).json()) as { id: number }[];
    const version = latest.id;
    const flowCurls = (await flowPage.locator('pre.curl').allTextContents()).join('\n');
    for (const kind of ['run', 'run_wait_result', 'run_and_stream']) {
      expect(flowCurls).toContain(`/api/w/${s.workspace}/jobs/${kind}/f/u/admin/needs_ok`);
      expect(flowCurls).toContain(`/api/w/${s.workspace}/jobs/${kind}/fv/${version}`);
    }
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  });
});
