import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/**
 * Headless Debian Chromium for the browser tier (never a downloaded browser build). Each session
 * gets a fresh profile directory, removed again on close.
 */
export const CHROMIUM_PATH = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface BrowserSession {
  context: BrowserContext;
  /** A new tab that records what a person would never want to see (see WatchedPage). */
  newPage(): Promise<WatchedPage>;
  close(): Promise<void>;
}

export interface WatchedPage {
  page: Page;
  /** Console errors, uncaught exceptions, CSP violations and requests leaving loopback, in order. */
  problems: string[];
}

/** `timezoneId`: the browser's time zone (an IANA name), as a person's machine elsewhere would have it. */
export async function launchBrowser(options: { timezoneId?: string } = {}): Promise<BrowserSession> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium`);
  const userDataDir = await mkdtemp(join(tmpdir(), 'svc-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, timeout: 60_000, ...options });
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
  // The persistent context opens with one blank tab; tests open their own.
  await Promise.all(context.pages().map((page) => page.close()));
  return {
    context,
    newPage: () => watch(context),
    async close() {
      await context.close().catch(() => undefined);
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

async function watch(context: BrowserContext): Promise<WatchedPage> {
  const page = await context.newPage();
  // Fail fast inside the test's own timeout, naming the step that waited.
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol !== 'data:' && url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') problems.push(`external request: ${request.url()}`);
  });
  // Bindings and init scripts go through the DevTools protocol, so the page's own CSP does not stop them.
  await page.exposeFunction('__svcReportCspViolation', (text: string) => problems.push(`CSP violation: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { __svcReportCspViolation(text: string): void }).__svcReportCspViolation(`${event.effectiveDirective} blocked ${event.blockedURI || 'inline'}`);
    });
  });
  return { page, problems };
}

/**
 * A new tab (kept in `opened` for the after-each check) at `url`; when the page sends it to the
 * login page, signed in there as `username` with the tests' password `<username>-password`.
 * `prepare` runs on the tab before it goes (a test switching people clears the cookies there).
 */
export async function openAs(session: BrowserSession, opened: WatchedPage[], username: string, url: string, prepare?: (page: Page) => Promise<void>): Promise<Page> {
  const watched = await session.newPage();
  watched.page.setDefaultTimeout(30_000);
  opened.push(watched);
  const { page } = watched;
  await prepare?.(page);
  await page.goto(url);
  if (new URL(page.url()).pathname === '/login') {
    await page.fill('#email', `${username}@example.com`);
    await page.fill('#password', `${username}-password`);
    await page.click('button[type=submit]');
    await page.waitForURL((at) => at.pathname !== '/login');
  }
  return page;
}
