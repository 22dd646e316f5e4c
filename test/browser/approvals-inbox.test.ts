import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, waitForJob, type TestServer } from '../http/harness.js';
import { launchBrowser, type BrowserSession } from './browser.js';

/**
 * The `/approvals` page in Chromium against the real local service: a finance approver logs in
 * through the login page, sees the run waiting at the ConsentGate with its rendered (escaped)
 * message, approves it with a reason, and `pay` sees the decision; a rejection fails the other run.
 * Suspended approval steps asking the finance group are listed too, with their description (its map
 * markers where their coordinates say) and form, approved or rejected with a reason through the
 * resume API's rules; a step asking another group is not.
 * Someone who is not an approver sees nothing to decide. No console error, CSP violation or
 * request off loopback.
 */

let s: TestServer;
let browser: BrowserSession;
beforeAll(async () => {
  [s, browser] = await Promise.all([startServer(), launchBrowser()]);
  for (const [name, role] of [['fiona', 'operator'], ['olga', 'operator']]) {
    expect((await s.post('/api/users/create', { username: name, email: `${name}@example.com`, password: `${name}-password-1` })).status).toBe(201);
    await s.post('/api/w/main/workspaces/add_user', { username: name, role });
  }
  await s.post('/api/w/main/groups/create', { name: 'finance' });
  await s.post('/api/w/main/groups/adduser/finance', { username: 'fiona' });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const rawscript = (content: string, input_transforms: Record<string, unknown> = {}) => ({ type: 'rawscript', language: 'bun', content, input_transforms });

async function runToGate(): Promise<string> {
  return runTo('f/finance/pay', 'awaiting_approval', { supplier: '<b>ACME</b>' });
}

async function runTo(path: string, status: 'awaiting_approval' | 'suspended', args: unknown = {}): Promise<string> {
  const id = await (await s.post(`/api/w/main/jobs/run/p/${path}`, args)).text();
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    if ((await (await s.fetch(`/api/w/main/jobs_u/get/${id}`)).json()).status === status) return id;
  }
  throw new Error(`run ${id} never got ${status}`);
}

describe('the approvals page', () => {
  it('lets an approver decide waiting runs in the browser, with the same rules as the endpoint', async () => {
    const flow = {
      path: 'f/finance/pay',
      summary: 'Pay the supplier',
      schema: { type: 'object', properties: { supplier: { type: 'string' } }, required: [] },
      value: {
        modules: [
          { id: 'gate', value: { type: 'consentgate', approvers: ['group:finance'], message: 'Pay {{ context.supplier }} ({{ workflow.name }})' } },
          { id: 'pay', value: rawscript('export function main(consent: any) { return { paid: true, consent } }', { consent: { type: 'javascript', expr: 'results.gate' } }) },
        ],
      },
    };
    expect((await s.post('/api/w/main/flows/create', flow)).status).toBe(201);
    const approveMe = await runToGate();
    const rejectMe = await runToGate();

    const w = await browser.newPage();
    await w.page.goto(`${s.url}/approvals`);
    await w.page.waitForURL((url) => url.pathname === '/login');
    await w.page.locator('#email').fill('fiona@example.com');
    await w.page.locator('#password').fill('fiona-password-1');
    await w.page.getByRole('button', { name: 'Log in' }).click();
    await w.page.waitForURL((url) => url.pathname === '/approvals');

    const item = w.page.getByRole('article', { name: `f/finance/pay ${approveMe}` });
    // Reject is destructive and looks it: never the same button as Approve.
    const background = (name: string) => item.getByRole('button', { name }).evaluate((b) => getComputedStyle(b).backgroundColor);
    expect(await background('Reject')).not.toBe(await background('Approve'));
    // The input is shown as text, never as markup.
    await expect(item.locator('.message').textContent()).resolves.toBe('Pay <b>ACME</b> (Pay the supplier)');
    await item.getByLabel('Reason').fill('invoice checked');
    await item.getByRole('button', { name: 'Approve' }).click();
    await item.getByText('Approved: the run goes on.').waitFor();
    expect(await waitForJob(s, approveMe)).toMatchObject({ status: 'success', result: { paid: true, consent: { decision: 'approved', approver: 'fiona', reason: 'invoice checked' } } });

    const other = w.page.getByRole('article', { name: `f/finance/pay ${rejectMe}` });
    // A rejection needs a reason: the endpoint's answer is shown, and nothing is decided.
    await other.getByRole('button', { name: 'Reject' }).click();
    await other.getByText('reason: a rejection needs a reason').waitFor();
    await other.getByLabel('Reason').fill('wrong supplier');
    await other.getByRole('button', { name: 'Reject' }).click();
    await other.getByText('Rejected: the run failed.').waitFor();
    expect(await waitForJob(s, rejectMe)).toMatchObject({ status: 'failed', result: { decision: 'rejected', approver: 'fiona', reason: 'wrong supplier' } });

    await w.page.reload();
    await w.page.getByText('Nothing waits for your decision.').waitFor();
    // The one 400 is the refused rejection without a reason, which Chromium logs as a failed load.
    expect(w.problems).toEqual(['console error: Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    await w.page.close();
  }, 90_000);

  it('lists the approval steps the person may resolve, with description and form, and approves or rejects them', async () => {
    const ask = `export function main() {
  return {
    description: { render_all: [{ markdown: '## Refund for order 7' }, { map: { lat: 48.85, lon: 2.35, markers: [{ lat: 48.85, lon: 2.45, title: 'Warehouse' }] } }] },
    default_args: { note: 'looks fine' },
  };
}`;
    const refund = (path: string, group: string) => ({
      path,
      summary: 'Refund a customer',
      value: {
        modules: [
          {
            id: 'ask',
            value: rawscript(ask),
            suspend: {
              required_events: 1,
              user_groups_required: group,
              resume_form: { schema: { properties: { amount: { type: 'number', description: 'Amount to refund' }, note: { type: 'string' } }, required: ['amount'], order: ['amount', 'note'] } },
            },
          },
          { id: 'pay', value: rawscript('export function main(r: any, a: string[]) { return { refunded: r, approvers: a } }', { r: { type: 'javascript', expr: 'resume' }, a: { type: 'javascript', expr: 'approvers' } }) },
        ],
      },
    });
    expect((await s.post('/api/w/main/flows/create', refund('f/finance/refund', 'finance'))).status).toBe(201);
    expect((await s.post('/api/w/main/flows/create', refund('f/legal/refund', 'legal'))).status).toBe(201);
    expect((await s.post('/api/w/main/groups/create', { name: 'legal' })).status).toBeLessThan(300);
    const approveMe = await runTo('f/finance/refund', 'suspended');
    const rejectMe = await runTo('f/finance/refund', 'suspended');
    const notMine = await runTo('f/legal/refund', 'suspended');

    const w = await browser.newPage();
    await w.page.goto(`${s.url}/login?next=%2Fapprovals`);
    await w.page.locator('#email').fill('fiona@example.com');
    await w.page.locator('#password').fill('fiona-password-1');
    await w.page.getByRole('button', { name: 'Log in' }).click();
    await w.page.waitForURL((url) => url.pathname === '/approvals');

    const steps = w.page.getByRole('region', { name: 'Approval steps' });
    await expect(steps.getByRole('article').count()).resolves.toBe(2);
    await expect(w.page.getByRole('article', { name: `f/legal/refund step ask ${notMine}` }).count()).resolves.toBe(0);

    const item = w.page.getByRole('article', { name: `f/finance/refund step ask ${approveMe}` });
    await expect(item.getByRole('heading', { name: 'Refund for order 7' }).isVisible()).resolves.toBe(true);
    // The warehouse is east of the map's centre: its marker sits to the right of the centre cross, level with it.
    const cross = (await item.locator('svg.map .map-center').boundingBox())!;
    const marker = (await item.locator('svg.map .marker circle').boundingBox())!;
    expect(marker.x + marker.width / 2).toBeGreaterThan(cross.x + cross.width / 2 + 50);
    expect(Math.abs(marker.y + marker.height / 2 - (cross.y + cross.height / 2))).toBeLessThan(2);
    await expect(item.locator('[data-field="note"]').inputValue()).resolves.toBe('looks fine');
    // The form's required field: the browser asks for it, and nothing is sent.
    await item.getByRole('button', { name: 'Approve' }).click();
    await expect(item.locator('[data-field="amount"]').evaluate((el) => (el as HTMLInputElement).validationMessage)).resolves.not.toBe('');
    expect((await (await s.fetch(`/api/w/main/jobs_u/get/${approveMe}`)).json()).flow_status.suspend.approvals_received).toBe(0);
    await item.getByLabel('amount').fill('12.5');
    await item.getByRole('button', { name: 'Approve' }).click();
    await item.getByText('Approved: 1 of 1 approvals received; the flow goes on.').waitFor();
    expect(await waitForJob(s, approveMe)).toMatchObject({ status: 'success', result: { refunded: { amount: 12.5, note: 'looks fine' }, approvers: ['fiona'] } });

    const other = w.page.getByRole('article', { name: `f/finance/refund step ask ${rejectMe}` });
    await other.getByLabel('Reason for a rejection').fill('duplicate request');
    await other.getByRole('button', { name: 'Reject' }).click();
    await other.getByText('Rejected: the flow is canceled.').waitFor();
    const canceled = await waitForJob(s, rejectMe);
    expect(canceled.status).toBe('canceled');
    expect(canceled.result.error.message).toContain('duplicate request');
    expect(canceled.flow_status.audit).toMatchObject([{ step: 'ask', event: 'canceled', who: 'fiona', reason: 'duplicate request' }]);

    await w.page.reload();
    await expect(w.page.getByRole('region', { name: 'Approval steps' }).count()).resolves.toBe(0);
    expect(w.problems).toEqual([]);
    await w.page.close();
    // Not left suspended for the server's shutdown.
    expect((await s.post(`/api/w/main/jobs_u/queue/cancel/${notMine}`, {})).status).toBe(200);
  }, 90_000);

  it('shows nothing to decide to someone who is not an approver', async () => {
    await runToGate();
    const login = await s.fetch('/api/auth/login', { method: 'POST', token: null, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'olga@example.com', password: 'olga-password-1' }) });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const page = await (await s.fetch('/approvals', { token: null, headers: { cookie } })).text();
    expect(page).toContain('Nothing waits for your decision.');
    expect(page).not.toContain('f/finance/pay');
  });
});
