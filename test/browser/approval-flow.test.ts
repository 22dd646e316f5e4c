import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startServer, waitForJob, type TestServer } from '../http/harness.js';
import { launchBrowser, type BrowserSession, type WatchedPage } from './browser.js';

/**
 * The "done when", in Chromium against the real local service: a flow asks two approvers
 * through getResumeUrls, one approves on the approval page (description, prefill, enums, typed
 * values), the other with a plain POST, and the flow goes on with the last form values and both
 * approvers; self-approval is refused on the page after a login through the login page; the
 * Cancel button cancels the flow, and hide_cancel hides it. No page may log a console error or a
 * CSP violation, or make a request off loopback.
 */

let s: TestServer;
let browser: BrowserSession;
/** Extra browser sessions a test opened (fresh profiles); closed after each test. */
const extraSessions: BrowserSession[] = [];
/** Every page a test opened, checked for problems after each test. */
const opened: WatchedPage[] = [];

beforeAll(async () => {
  [s, browser] = await Promise.all([startServer(), launchBrowser()]);
});

afterEach(async () => {
  const problems = opened.flatMap((w) => w.problems.map((p) => `${w.page.url()}: ${p}`));
  await Promise.all(opened.map((w) => w.page.close().catch(() => undefined)));
  opened.length = 0;
  await Promise.all(extraSessions.splice(0).map((b) => b.close()));
  expect(problems, 'console errors, CSP violations or external requests').toEqual([]);
});

afterAll(async () => {
  await Promise.all(extraSessions.splice(0).map((b) => b.close()));
  await browser?.close();
  await s?.stop();
});

const TEST_TIMEOUT = 90_000;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const js = (expr: string) => ({ type: 'javascript', expr });
/** A URL the service built (absolute or not), as a path on the test server. */
const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');
const onServer = (url: string) => s.url + local(url);

async function newPage(session: BrowserSession = browser): Promise<WatchedPage> {
  const watched = await session.newPage();
  // Still failing well inside the test's timeout, with room for a loaded two-core machine.
  watched.page.setDefaultTimeout(20_000);
  opened.push(watched);
  return watched;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function getJob(id: string): Promise<any> {
  return (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
}

async function createFlow(path: string, value: unknown, token?: string) {
  const res = await s.fetch(`${ws()}/flows/create`, { ...json({ path, summary: 'Refund approval', value }), ...(token ? { token } : {}) });
  expect(res.status, await res.clone().text()).toBe(201);
}

type Urls = { resume: string; cancel: string; approvalPage: string };

/** Triggers the flow through its webhook and waits until it is suspended at `ask`. */
async function runUntilSuspended(path: string, args: unknown, token?: string): Promise<{ id: string; urls: Record<string, Urls> }> {
  const res = await s.fetch(`${ws()}/jobs/run/p/${path}`, { ...json(args), ...(token ? { token } : {}) });
  const id = await res.text();
  expect(res.status, id).toBe(201);
  return until(`flow ${id} to suspend`, async () => {
    const job = await getJob(id);
    if (['success', 'failed', 'canceled'].includes(job.status)) throw new Error(`flow ended as ${job.status}: ${JSON.stringify(job.result)}`);
    return job.status === 'suspended' ? { id, urls: job.flow_status.results.ask.urls } : undefined;
  });
}

/** Waits for the job to end; longer than the harness default, for a loaded machine. */
const finished = (id: string) => waitForJob(s, id, 45_000);

const ASK = `import * as svc from 'svc-client';
export async function main(approvers: string[]) {
  const urls: Record<string, unknown> = {};
  for (const a of approvers) urls[a] = await svc.getResumeUrls(a);
  return {
    urls,
    description: {
      render_all: [
        { markdown: '# Refund for order 42' },
        { map: { lat: 48.85, lon: 2.35, markers: [{ lat: 48.85, lon: 2.35, title: 'Paris' }] } },
        { 'table-row-object': [{ item: 'shoes', price: 40 }] },
      ],
    },
    default_args: { reason: 'customer asked' },
    enums: { channel: ['email', 'phone'] },
  };
}`;

const AFTER = `def main(resume, approvers):
    return {"resume": resume, "approvers": approvers}
`;

const FINAL = `export function main(prev: any) {
  return { summary: \`\${prev.approvers.join(' and ')} approved: \${prev.resume.reason}\`, resume: prev.resume, approvers: prev.approvers };
}`;

const FORM = {
  schema: {
    properties: { reason: { type: 'string', description: 'Why' }, amount: { type: 'number' }, channel: { type: 'string' }, urgent: { type: 'boolean' } },
    required: ['reason'],
    order: ['reason', 'amount', 'channel', 'urgent'],
  },
};

function askStep(suspend: Record<string, unknown>) {
  return { id: 'ask', value: { type: 'rawscript', language: 'bun', content: ASK, input_transforms: { approvers: js('flow_input.approvers') } }, suspend };
}

function threeSteps(suspend: Record<string, unknown>) {
  return {
    modules: [
      askStep(suspend),
      { id: 'after', value: { type: 'rawscript', language: 'python3', content: AFTER, input_transforms: { resume: js('resume'), approvers: js('approvers') } } },
      { id: 'final', value: { type: 'rawscript', language: 'bun', content: FINAL, input_transforms: { prev: js('previous_result') } } },
    ],
  };
}

/** A user in the workspace, with a password for the login page and an API token. */
async function user(username: string): Promise<{ email: string; password: string; token: string }> {
  const email = `${username}@example.com`;
  const password = `${username}-password-1`;
  expect((await s.post('/api/users/create', { username, email, password })).status).toBe(201);
  expect((await s.post(`${ws()}/workspaces/add_user`, { username, role: 'developer' })).status).toBeLessThan(300);
  const login = await s.fetch('/api/auth/login', { ...json({ email, password }), token: null });
  expect(login.status).toBe(200);
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const res = await s.fetch('/api/users/tokens/create', { ...json({ label: 'browser-test' }), token: null, headers: { cookie, 'content-type': 'application/json' } });
  const token = await res.text();
  expect(res.status, token).toBe(201);
  return { email, password, token };
}

/** Logs in through the login page form; the page then goes to its `next`. */
async function logInOnPage(w: WatchedPage, who: { email: string; password: string }) {
  await w.page.locator('#email').fill(who.email);
  await w.page.locator('#password').fill(who.password);
  await w.page.getByRole('button', { name: 'Log in' }).click();
}

describe('approval flow in Chromium against the real server', () => {
  it(
    'takes one approval on the page and one by POST, counts each once, and the flow goes on with the form values and both approvers',
    async () => {
      await createFlow('u/admin/refund', threeSteps({ required_events: 2, timeout: 600, resume_form: FORM }));
      const { id, urls } = await runUntilSuspended('u/admin/refund', { approvers: ['alice', 'bob'] });
      expect(Object.keys(urls).sort()).toEqual(['alice', 'bob']);

      const first = await newPage();
      const { page } = first;
      await page.goto(onServer(urls.alice.approvalPage));

      // The description: the heading, the map marker and the table.
      await expect(page.locator('#flow-summary').textContent()).resolves.toBe('Refund approval');
      await expect(page.locator('#flow-path').textContent()).resolves.toBe(`${s.workspace} / u/admin/refund`);
      await expect(page.locator('#description h1').textContent()).resolves.toBe('Refund for order 42');
      await expect(page.locator('#description svg.map .marker').count()).resolves.toBe(1);
      await expect(page.locator('#description svg.map .marker title').textContent()).resolves.toBe('Paris');
      await expect(page.locator('#description .markers li').allTextContents()).resolves.toEqual(['1. Paris: 48.85, 2.35 open map']);
      await expect(page.locator('#description table thead th').allTextContents()).resolves.toEqual(['item', 'price']);
      await expect(page.locator('#description table tbody tr').allTextContents()).resolves.toEqual(['shoes40']);
      await expect(page.locator('#approvals-received').textContent()).resolves.toBe('0');
      await expect(page.locator('#approvals-required').textContent()).resolves.toBe('2');

      // The form: in the schema's order, reason prefilled from default_args, channel a choice from enums.
      await expect(page.locator('[data-field]').evaluateAll((els) => els.map((el) => el.getAttribute('data-field')))).resolves.toEqual(['reason', 'amount', 'channel', 'urgent']);
      await expect(page.locator('[data-field="reason"]').inputValue()).resolves.toBe('customer asked');
      await expect(page.getByText('Why', { exact: true }).isVisible()).resolves.toBe(true);
      await expect(page.locator('[data-field="channel"] option').evaluateAll((els) => els.map((el) => (el as HTMLOptionElement).value))).resolves.toEqual(['', 'email', 'phone']);

      await page.locator('[data-field="channel"]').selectOption('phone');
      await page.locator('[data-field="amount"]').fill('12.5');
      await page.locator('[data-field="urgent"]').check();
      const posted = page.waitForRequest((req) => req.method() === 'POST' && req.url().includes('/jobs_u/resume/'));
      await page.getByRole('button', { name: 'Approve' }).click();
      expect((await posted).postDataJSON()).toEqual({ reason: 'customer asked', amount: 12.5, channel: 'phone', urgent: true });
      await page.locator('#status').getByText('Approved. 1 of 2 approvals received.', { exact: true }).waitFor();
      await expect(page.locator('#approvals-received').textContent()).resolves.toBe('1');
      await expect(page.locator('#approvals-required').textContent()).resolves.toBe('2');
      await expect(page.locator('#approve').isVisible()).resolves.toBe(false);

      const waiting = await getJob(id);
      expect(waiting.status).toBe('suspended');
      expect(waiting.flow_status.suspend).toMatchObject({ module: 'ask', approvals_received: 1, approvals_required: 2 });

      // The same link again: it says it was used and offers no Approve button; a replayed POST does not count.
      const again = await newPage();
      await again.page.goto(onServer(urls.alice.approvalPage));
      await expect(again.page.locator('#blocked').textContent()).resolves.toBe('this link was already used to approve: it counts once');
      await expect(again.page.locator('#approvals-received').textContent()).resolves.toBe('1');
      await expect(again.page.locator('#approve').count()).resolves.toBe(0);
      await expect(again.page.locator('button').count()).resolves.toBe(0);
      expect((await s.fetch(local(urls.alice.resume), { ...json({ reason: 'twice' }), token: null })).status).toBe(409);
      expect((await getJob(id)).flow_status.suspend.approvals_received).toBe(1);

      // The second approver, without a browser.
      const second = await fetch(onServer(urls.bob.resume), json({ reason: 'double-checked', amount: 7, channel: 'email', urgent: false }));
      expect(second.status).toBe(200);
      expect(await second.json()).toEqual({ approvals_received: 2, approvals_required: 2 });

      const done = await finished(id);
      expect(done.status, JSON.stringify(done.result)).toBe('success');
      const resume = { reason: 'double-checked', amount: 7, channel: 'email', urgent: false };
      expect(done.flow_status.results.after).toEqual({ resume, approvers: ['alice', 'bob'] });
      expect(done.result).toEqual({ summary: 'alice and bob approved: double-checked', resume, approvers: ['alice', 'bob'] });

      // After the flow went on, the page says so and still offers nothing to click.
      const later = await newPage();
      await later.page.goto(onServer(urls.alice.approvalPage));
      await expect(later.page.locator('#state').textContent()).resolves.toBe('This step has been approved and the flow has resumed.');
      await expect(later.page.locator('#approvals-received').textContent()).resolves.toBe('2');
      await expect(later.page.locator('button').count()).resolves.toBe(0);
    },
    TEST_TIMEOUT,
  );

  it(
    'refuses self-approval on the page after a login through the login page, and lets another user approve',
    async () => {
      const ann = await user('ann');
      const ben = await user('ben');
      await createFlow('u/ann/payout', threeSteps({ required_events: 1, timeout: 600, self_approval_disabled: true, resume_form: FORM }), ann.token);
      const { id, urls } = await runUntilSuspended('u/ann/payout', { approvers: ['anyone'] }, ann.token);
      const pagePath = local(urls.anyone.approvalPage);

      // Logged out: the page asks for a login and links to the login page, with no buttons.
      const asAnn = await newPage();
      await asAnn.page.goto(s.url + pagePath);
      await expect(asAnn.page.locator('#viewer').textContent()).resolves.toBe('not signed in');
      await expect(asAnn.page.locator('#blocked').textContent()).resolves.toBe('log in to approve this step');
      await expect(asAnn.page.locator('button').count()).resolves.toBe(0);
      const login = asAnn.page.getByRole('link', { name: 'Log in' });
      await expect(login.getAttribute('href')).resolves.toBe(`/login?next=${encodeURIComponent(pagePath)}`);
      await login.click();
      await asAnn.page.waitForURL((url) => url.pathname === '/login');
      await expect(asAnn.page.getByRole('heading', { name: 'Log in' }).isVisible()).resolves.toBe(true);

      // Logged in as the user who triggered the flow: back on the page, refused, still no buttons.
      await logInOnPage(asAnn, ann);
      await asAnn.page.waitForURL(s.url + pagePath);
      await asAnn.page.locator('#viewer').getByText('signed in as ann').waitFor();
      await expect(asAnn.page.locator('#blocked').textContent()).resolves.toBe('the user who triggered the flow may not approve it');
      await expect(asAnn.page.locator('#approve').count()).resolves.toBe(0);
      await expect(asAnn.page.locator('button').count()).resolves.toBe(0);
      expect((await getJob(id)).flow_status.suspend.approvals_received).toBe(0);

      // Another user, in a fresh browser profile (no session of ann's), logs in and approves.
      const fresh = await launchBrowser();
      extraSessions.push(fresh);
      const asBen = await newPage(fresh);
      await asBen.page.goto(`${s.url}/login?next=${encodeURIComponent(pagePath)}`);
      await logInOnPage(asBen, ben);
      await asBen.page.waitForURL(s.url + pagePath);
      await asBen.page.locator('#viewer').getByText('signed in as ben').waitFor();
      await expect(asBen.page.locator('#blocked').count()).resolves.toBe(0);
      await expect(asBen.page.locator('[data-field="reason"]').inputValue()).resolves.toBe('customer asked');
      await asBen.page.getByRole('button', { name: 'Approve' }).click();
      await asBen.page.locator('#status').getByText('Approved. 1 of 1 approvals received; the flow resumes.', { exact: true }).waitFor();

      const done = await finished(id);
      expect(done.status, JSON.stringify(done.result)).toBe('success');
      expect(done.flow_status.results.after.approvers).toEqual(['ben']);
      expect(done.result).toMatchObject({ approvers: ['ben'], resume: { reason: 'customer asked', urgent: false } });
    },
    TEST_TIMEOUT,
  );

  it(
    'lets a signed-in user who may not approve switch account on the page and approve as the other user',
    async () => {
      const cid = await user('cid');
      const dan = await user('dan');
      await createFlow('u/cid/payout', threeSteps({ required_events: 1, timeout: 600, self_approval_disabled: true, resume_form: FORM }), cid.token);
      const { id, urls } = await runUntilSuspended('u/cid/payout', { approvers: ['anyone'] }, cid.token);
      const pagePath = local(urls.anyone.approvalPage);

      // Signed in as the user who triggered the flow: refused, but offered to switch account.
      const fresh = await launchBrowser();
      extraSessions.push(fresh);
      const w = await newPage(fresh);
      await w.page.goto(`${s.url}/login?next=${encodeURIComponent(pagePath)}`);
      await logInOnPage(w, cid);
      await w.page.waitForURL(s.url + pagePath);
      await w.page.locator('#viewer').getByText('signed in as cid').waitFor();
      await expect(w.page.locator('#blocked').textContent()).resolves.toBe('the user who triggered the flow may not approve it');
      const cidSession = (await fresh.context.cookies(s.url)).find((c) => c.name === 'svc_session')!;
      await w.page.getByRole('link', { name: 'Switch account' }).click();
      await w.page.waitForURL((url) => url.pathname === '/login');

      // Logged in as dan, back on the same page: dan may approve, and does.
      await logInOnPage(w, dan);
      await w.page.waitForURL(s.url + pagePath);
      await w.page.locator('#viewer').getByText('signed in as dan').waitFor();
      await expect(w.page.locator('#blocked').count()).resolves.toBe(0);
      await w.page.getByRole('button', { name: 'Approve' }).click();
      await w.page.locator('#status').getByText('Approved. 1 of 1 approvals received; the flow resumes.', { exact: true }).waitFor();
      const done = await finished(id);
      expect(done.status, JSON.stringify(done.result)).toBe('success');
      expect(done.flow_status.results.after.approvers).toEqual(['dan']);

      // cid's session ended with the switch, rather than living on behind a replaced cookie.
      const whoami = await s.fetch('/api/users/whoami', { token: null, headers: { cookie: `svc_session=${cidSession.value}` } });
      expect(whoami.status).toBe(401);
    },
    TEST_TIMEOUT,
  );

  it(
    'cancels the flow with the Cancel button and its reason; hide_cancel shows no Cancel button',
    async () => {
      await createFlow('u/admin/cancellable', threeSteps({ required_events: 1, timeout: 600, resume_form: FORM }));
      const { id, urls } = await runUntilSuspended('u/admin/cancellable', { approvers: ['carol'] });
      const w = await newPage();
      await w.page.goto(onServer(urls.carol.approvalPage));
      await w.page.locator('#cancel-reason').fill('too expensive');
      const posted = w.page.waitForRequest((req) => req.method() === 'POST' && req.url().includes('/jobs_u/cancel/'));
      await w.page.getByRole('button', { name: 'Cancel' }).click();
      expect((await posted).postDataJSON()).toEqual({ reason: 'too expensive' });
      await w.page.locator('#status').getByText('Canceled. The flow does not resume from this step.', { exact: true }).waitFor();
      await expect(w.page.locator('#approve').isVisible()).resolves.toBe(false);

      const canceled = await finished(id);
      expect(canceled.status).toBe('canceled');
      expect(canceled.result.error.message).toContain('too expensive');
      expect(canceled.flow_status.results.after).toBeUndefined();

      const reopened = await newPage();
      await reopened.page.goto(onServer(urls.carol.approvalPage));
      await expect(reopened.page.locator('#state').textContent()).resolves.toBe('This approval was canceled: the flow does not resume from this step.');
      await expect(reopened.page.locator('button').count()).resolves.toBe(0);

      await createFlow('u/admin/uncancellable', threeSteps({ required_events: 1, timeout: 600, hide_cancel: true }));
      const hidden = await runUntilSuspended('u/admin/uncancellable', { approvers: ['dave'] });
      const h = await newPage();
      await h.page.goto(onServer(hidden.urls.dave.approvalPage));
      await expect(h.page.getByRole('button', { name: 'Approve' }).isVisible()).resolves.toBe(true);
      await expect(h.page.locator('#cancel').count()).resolves.toBe(0);
      await expect(h.page.locator('#cancel-reason').count()).resolves.toBe(0);
      await expect(h.page.locator('button').count()).resolves.toBe(1);
      // Not left suspended for the server's shutdown.
      expect((await s.post(`${ws()}/jobs_u/queue/cancel/${hidden.id}`, {})).status).toBe(200);
      expect((await finished(hidden.id)).status).toBe('canceled');
    },
    TEST_TIMEOUT,
  );
});
