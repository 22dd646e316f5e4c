import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { renderApprovalPage, type ApprovalPageModel } from '../../functions/http/approval-page.js';
import { consoleBundle } from '../../functions/http/console/static-assets.js';
import { launchBrowser, type BrowserSession, type WatchedPage } from './browser.js';

/**
 * The approval page in Chromium, served by a stand-in for the real route: GET /page/{name} serves a
 * rendered model, and its script, the console bundle approval-page.js, at the URL the page names;
 * POSTs to /resume/{name} and /cancel/{name} are recorded and answered.
 */
interface RecordedPost {
  path: string;
  contentType: string | undefined;
  body: unknown;
}

const pages = new Map<string, string>();
const posts: RecordedPost[] = [];
let server: Server;
let origin: string;
let browser: BrowserSession;
let current: WatchedPage | null = null;

function answer(path: string): { status: number; body: unknown } {
  if (path === '/resume/fail') return { status: 409, body: { error: { code: 'conflict', message: 'this approval link was already used' } } };
  if (path.startsWith('/resume/')) return { status: 200, body: { approvals_received: 2, approvals_required: 2 } };
  if (path.startsWith('/cancel/')) return { status: 200, body: { canceled: true } };
  return { status: 404, body: { error: { code: 'not_found', message: 'no such route' } } };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    if (req.method === 'GET' && path.startsWith('/page/') && pages.has(path.slice(6))) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pages.get(path.slice(6)));
      return;
    }
    const bundle = consoleBundle('approval-page');
    if (req.method === 'GET' && path === bundle.url) {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle.text);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST') {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // recorded as text: the assertion on the body then fails visibly
        }
        posts.push({ path, contentType: req.headers['content-type'], body });
      }
      const { status, body } = answer(req.method === 'POST' ? path : '');
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});

afterEach(async () => {
  await current?.page.close();
  current = null;
  posts.length = 0;
});

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

function model(name: string, overrides: Partial<ApprovalPageModel> = {}): ApprovalPageModel {
  return {
    workspace: 'demo',
    flowPath: 'f/ops/deploy',
    flowSummary: 'Deploy <web> to production',
    stepId: 'approve',
    stepSummary: 'Ops approval',
    triggeredBy: 'alice@example.com',
    approvalsReceived: 1,
    approvalsRequired: 2,
    description: null,
    formSchema: null,
    defaultArgs: {},
    enums: {},
    hideCancel: false,
    resumeUrl: `/resume/${name}`,
    cancelUrl: `/cancel/${name}`,
    state: 'waiting',
    viewer: 'bob@example.com',
    blockedReason: null,
    ...overrides,
  };
}

async function open(name: string, overrides: Partial<ApprovalPageModel> = {}): Promise<WatchedPage> {
  pages.set(name, renderApprovalPage(model(name, overrides)));
  current = await browser.newPage();
  await current.page.goto(`${origin}/page/${name}`);
  return current;
}

const description = {
  render_all: [
    { markdown: '# Release 4.2\n\nShips **three** fixes.\n\n<img src=x onerror="window.pwned = 1">' },
    { 'table-row-object': [{ service: 'web', replicas: 3 }, { service: 'worker', replicas: 5 }] },
    { map: { lat: 48.8584, lon: 2.2945, zoom: 14, markers: [{ lat: 48.8606, lon: 2.3376, title: 'Louvre' }, { lat: 48.853, lon: 2.3499, title: 'Notre-Dame' }] } },
    { html: '<p id="approve">html item</p><script>window.pwned = 2</script>' },
  ],
};

const formSchema = {
  properties: {
    comment: { type: 'string', description: 'What the next step should know' },
    replicas: { type: 'integer', default: 1 },
    ratio: { type: 'number' },
    env: { type: 'string', enum: ['dev', 'staging'] },
    notify: { type: 'boolean', default: false },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['comment', 'env'],
  order: ['env', 'comment'],
};

describe('approval page in Chromium', () => {
  it('shows the description, posts exactly the typed form values and shows the success', async () => {
    const { page, problems } = await open('full', { description, formSchema, defaultArgs: { tags: ['a', 'b'] }, enums: { env: ['staging', 'prod'] } });

    await expect(page.locator('#flow-summary').textContent()).resolves.toBe('Deploy <web> to production');
    await expect(page.locator('#description h1').textContent()).resolves.toBe('Release 4.2');
    await expect(page.locator('#description table tbody tr').allTextContents()).resolves.toEqual(['web3', 'worker5']);
    await expect(page.locator('svg.map .marker').count()).resolves.toBe(2);
    await expect(page.locator('.markers li').allTextContents()).resolves.toEqual([
      '1. Louvre: 48.8606, 2.3376 open map',
      '2. Notre-Dame: 48.853, 2.3499 open map',
    ]);
    await expect(page.locator('#description .html').innerHTML()).resolves.toBe('<p>html item</p>'); // no id: user content cannot clobber the page's own elements
    await expect(page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).resolves.toBeUndefined();
    await expect(page.locator('[data-field]').evaluateAll((els) => els.map((el) => el.getAttribute('data-field')))).resolves.toEqual([
      'env',
      'comment',
      'replicas',
      'ratio',
      'notify',
      'tags',
    ]);

    // The required comment is empty: the browser refuses to submit.
    await page.locator('#approve').click();
    await expect(page.locator('[data-field="comment"]').evaluate((el) => (el as HTMLInputElement).validity.valueMissing)).resolves.toBe(true);
    expect(posts).toEqual([]);

    await page.locator('[data-field="env"]').selectOption('prod');
    await page.getByLabel('comment').fill('Ship it');
    await page.locator('[data-field="replicas"]').fill('3');
    await page.locator('[data-field="ratio"]').fill('0.25');
    await page.locator('[data-field="notify"]').check();
    await page.locator('#approve').click();

    await page.locator('#status').getByText('Approved. 2 of 2 approvals received; the flow resumes.').waitFor();
    expect(posts).toEqual([
      { path: '/resume/full', contentType: 'application/json', body: { env: 'prod', comment: 'Ship it', replicas: 3, ratio: 0.25, notify: true, tags: ['a', 'b'] } },
    ]);
    await expect(page.locator('#approvals-received').textContent()).resolves.toBe('2');
    await expect(page.locator('#approve').isVisible()).resolves.toBe(false);
    await expect(page.locator('#cancel').isVisible()).resolves.toBe(false);
    expect(problems).toEqual([]);
  });

  it("shows the server's error message and lets the approver try again", async () => {
    const { page, problems } = await open('fail');
    await page.locator('#approve').click();
    await page.locator('#status').getByText('Error: this approval link was already used').waitFor();
    expect(posts).toEqual([{ path: '/resume/fail', contentType: 'application/json', body: {} }]);
    await expect(page.locator('#approve').isEnabled()).resolves.toBe(true);
    // The failed fetch itself is logged by Chromium as a resource error; nothing else may be.
    expect(problems.filter((p) => !p.includes('the server responded with a status of 409'))).toEqual([]);
  });

  it('posts the cancel reason to the cancel URL', async () => {
    const { page, problems } = await open('c1', { formSchema });
    await page.locator('#cancel-reason').fill('not today');
    await page.locator('#cancel').click();
    await page.locator('#status').getByText('Canceled.').waitFor();
    expect(posts).toEqual([{ path: '/cancel/c1', contentType: 'application/json', body: { reason: 'not today' } }]);
    expect(problems).toEqual([]);
  });

  it('has no cancel button when hide_cancel is set', async () => {
    const { page, problems } = await open('hidden', { hideCancel: true });
    await expect(page.locator('#approve').isVisible()).resolves.toBe(true);
    await expect(page.locator('#cancel').count()).resolves.toBe(0);
    expect(problems).toEqual([]);
  });

  it('shows the reason and no buttons when the viewer may not approve', async () => {
    const { page, problems } = await open('blocked', {
      viewer: 'alice@example.com',
      blockedReason: 'the user who triggered the flow may not approve it',
      formSchema,
    });
    await expect(page.locator('button').count()).resolves.toBe(0);
    await expect(page.locator('#blocked').textContent()).resolves.toBe('the user who triggered the flow may not approve it');
    expect(problems).toEqual([]);
  });

  it('renders a <script> in a flow summary, a field description and a render_all string as inert text', async () => {
    const attack = '<script>window.pwned = 3</script><img src=x onerror="window.pwned = 4">';
    const { page, problems } = await open('inert', {
      flowSummary: `Deploy ${attack}`,
      description: { render_all: [`note ${attack}`] },
      formSchema: { properties: { comment: { type: 'string', description: `hint ${attack}` } } },
    });
    await expect(page.locator('#flow-summary').textContent()).resolves.toBe(`Deploy ${attack}`);
    await expect(page.locator('#description .text').textContent()).resolves.toBe(`note ${attack}`);
    await expect(page.locator('.hint').textContent()).resolves.toBe(`hint ${attack}`);
    // Only the page's own script element exists, no injected image, and nothing ran.
    await expect(page.locator('script').count()).resolves.toBe(1);
    await expect(page.locator('img').count()).resolves.toBe(0);
    await expect(page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).resolves.toBeUndefined();
    expect(problems).toEqual([]);
  });
});
