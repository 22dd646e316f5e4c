import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';
import { startServer, waitForJob, type TestServer } from './harness.js';

/**
 * The "done when" for ConsentGates, over HTTP against either shell: a flow
 * `collect -> gate (group finance, timeout, email + webhook) -> pay`; the approvers get the signed
 * webhook (and, locally, the email over SMTP) with the rendered message; a non-approver gets 403;
 * a rejection fails the run with its reason; an approval lets `pay` see the decision; a gate
 * nobody decides times out into `failed`. The approvals page offers the waiting run and an approval
 * step asking finance, and takes the decisions its script sends. Locally the gate also survives
 * kill -9, and a notice the process died before sending is sent once it is back.
 */

const local = process.env.SVC_TEST_SHELL !== 'aws';
const SECRET = `whsec_${Buffer.from('the finance webhook secret').toString('base64')}`;

let s: TestServer;
let smtp: SMTPServer | null = null;
let hookServer: Server;
let hookUrl: string;
const mails: { to: string[]; data: string }[] = [];
const hooks: { headers: IncomingHttpHeaders; body: string }[] = [];
const tokens: Record<string, string> = {};
const cookies: Record<string, string> = {};

beforeAll(async () => {
  hookServer = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      hooks.push({ headers: req.headers, body });
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => hookServer.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/approvals`;
  // The receiver is on loopback: the instance must allow private webhook addresses (its SSRF guard).
  const env: Record<string, string> = { SVC_WEBHOOK_ALLOW_PRIVATE: '1' };
  if (local) {
    // SMTP is the local shell's mail; SES, the AWS shell's, is tested in test/aws/ses-email-sender.test.ts.
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
    await new Promise<void>((r) => smtp!.listen(0, '127.0.0.1', r));
    env.SVC_SMTP_URL = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
    env.SVC_SMTP_FROM = 'svc <svc@example.com>';
  }
  s = await startServer({ env });
  for (const [name, role] of [['fiona', 'operator'], ['nina', 'admin'], ['olga', 'operator']] as const) {
    expect((await s.post('/api/users/create', { username: name, email: `${name}@example.com`, password: `${name}-password-1` })).status).toBe(201);
    await s.post('/api/w/main/workspaces/add_user', { username: name, role });
    const login = await s.fetch('/api/auth/login', { method: 'POST', token: null, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `${name}@example.com`, password: `${name}-password-1` }) });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const res = await s.fetch('/api/users/tokens/create', { method: 'POST', token: null, headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ label: 'consent' }) });
    tokens[name] = await res.text();
    cookies[name] = cookie;
  }
  await s.post('/api/w/main/groups/create', { name: 'finance' });
  await s.post('/api/w/main/groups/adduser/finance', { username: 'fiona' });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await new Promise<void>((r) => hookServer.close(() => r()));
  if (smtp) await new Promise<void>((r) => smtp!.close(() => r()));
});

const rawscript = (content: string, input_transforms: Record<string, unknown> = {}) => ({ type: 'rawscript', language: 'bun', content, input_transforms });
const js = (expr: string) => ({ type: 'javascript', expr });

function payFlow(path: string, timeout: number) {
  return {
    path,
    summary: 'Pay the supplier',
    schema: { type: 'object', properties: { amount: { type: 'number' } }, required: [] },
    value: {
      modules: [
        { id: 'collect', value: rawscript('export function main(amount: number) { return amount * 2 }', { amount: js('flow_input.amount') }) },
        {
          id: 'gate',
          value: {
            type: 'consentgate',
            approvers: ['group:finance'],
            timeout,
            notify: [{ channel: 'email' }, { channel: 'webhook', url: hookUrl, secret: SECRET }],
            message: '{{ workflow.name }}: {{ context.collect }} EUR for {{ run.triggered_by }}',
          },
        },
        { id: 'pay', value: rawscript('export function main(consent: any) { return { paid: true, consent } }', { consent: js('results.gate') }) },
      ],
    },
  };
}

async function startRun(path: string, server = s): Promise<string> {
  const res = await server.fetch(`/api/w/main/jobs/run/p/${path}`, { method: 'POST', token: tokens.nina ?? server.token, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 21 }) });
  expect(res.status).toBe(201);
  return res.text();
}

async function awaitingApproval(server: TestServer, id: string): Promise<Record<string, any>> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    const job = await (await server.fetch(`/api/w/main/jobs_u/get/${id}`)).json();
    if (job.status === 'awaiting_approval') return job;
    if (['success', 'failed', 'canceled'].includes(job.status)) throw new Error(`run ${id} ended: ${JSON.stringify(job.result)}`);
  }
  throw new Error(`run ${id} never reached its gate`);
}

async function eventually<T>(read: () => T, ok: (v: T) => boolean): Promise<T> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    const v = read();
    if (ok(v)) return v;
  }
  return read();
}

const consent = (id: string, body: unknown, token: string) =>
  s.fetch(`/api/v1/runs/${id}/consent`, { method: 'POST', token, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('ConsentGate over HTTP', () => {
  it('notifies the approvers, refuses a non-approver, and fails the run on rejection with the reason', async () => {
    expect((await s.post('/api/w/main/flows/create', payFlow('f/finance/pay', 600))).status).toBe(201);
    const id = await startRun('f/finance/pay');
    await awaitingApproval(s, id);
    const message = 'Pay the supplier: 42 EUR for nina';

    const hook = await eventually(() => hooks.find((h) => h.body.includes(id)), (h) => h !== undefined);
    const payload = new Webhook(SECRET).verify(hook!.body, hook!.headers as Record<string, string>) as { data: Record<string, unknown> };
    expect(payload.data).toMatchObject({ run_id: id, message, step_id: 'gate' });
    if (local) {
      const mail = await eventually(() => mails.find((m) => m.data.includes(id)), (m) => m !== undefined);
      expect(mail?.to).toEqual(['fiona@example.com']);
      expect(mail?.data).toContain(message);
    }

    expect((await consent(id, { decision: 'approved', reason: 'me' }, tokens.olga)).status).toBe(403);
    const res = await consent(id, { decision: 'rejected', reason: 'wrong supplier' }, tokens.fiona);
    expect(res.status, await res.clone().text()).toBe(200);
    const failed = await waitForJob(s, id);
    expect(failed.status).toBe('failed');
    expect(failed.result).toMatchObject({ decision: 'rejected', approver: 'fiona', reason: 'wrong supplier' });
    expect((await consent(id, { decision: 'approved', reason: 'late' }, tokens.fiona)).status).toBe(409);
  });

  it('goes on to pay with the decision once approved', async () => {
    const id = await startRun('f/finance/pay');
    await awaitingApproval(s, id);
    expect((await consent(id, { decision: 'approved', reason: 'checked' }, tokens.fiona)).status).toBe(200);
    const done = await waitForJob(s, id);
    expect(done).toMatchObject({ status: 'success', result: { paid: true, consent: { decision: 'approved', approver: 'fiona', reason: 'checked' } } });
  });

  it('offers the waiting run and an approval step asking finance on the approvals page, and takes the decisions made there', async () => {
    const approvalsPage = async () => (await s.fetch('/approvals', { token: null, headers: { cookie: cookies.fiona } })).text();
    // What the page's script sends: same-origin JSON with the session cookie.
    const asPage = (path: string, body: unknown) => s.fetch(path, { method: 'POST', token: null, headers: { cookie: cookies.fiona, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const refund = {
      path: 'f/finance/refund',
      value: {
        modules: [
          { id: 'ask', value: rawscript('export function main() { return { description: "Refund 5 EUR?" } }'), suspend: { required_events: 1, user_groups_required: 'finance', resume_form: { schema: { properties: { amount: { type: 'number' } }, required: ['amount'] } } } },
          { id: 'after', value: rawscript('export function main(r: any, a: string[]) { return { ...r, approvers: a } }', { r: js('resume'), a: js('approvers') }) },
        ],
      },
    };
    expect((await s.post('/api/w/main/flows/create', refund)).status).toBe(201);
    const gateRun = await startRun('f/finance/pay');
    const stepRun = await startRun('f/finance/refund');
    await awaitingApproval(s, gateRun);
    for (let job: any = {}; job.status !== 'suspended'; await new Promise((r) => setTimeout(r, 50))) job = await (await s.fetch(`/api/w/main/jobs_u/get/${stepRun}`)).json();

    const page = await approvalsPage();
    expect(page).toContain(`data-run="${gateRun}"`);
    expect(page).toContain('Pay the supplier: 42 EUR for nina');
    const step = page.slice(page.indexOf(`aria-label="f/finance/refund step ask ${stepRun}"`));
    expect(step).toContain('Refund 5 EUR?');
    const resume = /data-resume="([^"]+)"/.exec(step)![1].replaceAll('&amp;', '&');
    await expect((await s.fetch('/approvals', { token: null, headers: { cookie: cookies.olga } })).text()).resolves.not.toContain(stepRun);

    expect((await asPage(`/api/v1/runs/${gateRun}/consent`, { decision: 'approved', reason: 'from the page' })).status).toBe(200);
    expect(await waitForJob(s, gateRun)).toMatchObject({ status: 'success', result: { consent: { decision: 'approved', approver: 'fiona', reason: 'from the page' } } });
    expect((await asPage(resume, {})).status).toBe(400);
    expect((await asPage(resume, { amount: 5 })).status).toBe(200);
    expect(await waitForJob(s, stepRun)).toMatchObject({ status: 'success', result: { amount: 5, approvers: ['fiona'] } });
    expect(await approvalsPage()).toContain('Nothing waits for your decision.');
  });

  it('times out into failed when nobody decides', async () => {
    expect((await s.post('/api/w/main/flows/create', payFlow('f/finance/pay_soon', 2))).status).toBe(201);
    const id = await startRun('f/finance/pay_soon');
    await awaitingApproval(s, id);
    const late = await waitForJob(s, id, 30_000);
    expect(late.status).toBe('failed');
    expect(late.result).toMatchObject({ decision: 'rejected', approver: null, reason: 'timeout' });
  });
});

// A restart of the local process on its data directory; the AWS shell's state lives in its emulators.
describe.skipIf(!local)('ConsentGate through kill -9', () => {
  it('keeps waiting after a restart, takes a decision then, and its timeout still fires', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-consent-'));
    const first = await startServer({ dataDir, token: 'consent-admin' });
    try {
      const gateFlow = (path: string, timeout: number) => ({
        path,
        value: { modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['admin'], self_approval: true, timeout, message: 'ok?' } }] },
      });
      expect((await first.post('/api/w/main/flows/create', gateFlow('u/admin/patient', 600))).status).toBe(201);
      expect((await first.post('/api/w/main/flows/create', gateFlow('u/admin/impatient', 3))).status).toBe(201);
      const patient = await (await first.fetch('/api/w/main/jobs/run/p/u/admin/patient', { method: 'POST', body: '{}' })).text();
      const impatient = await (await first.fetch('/api/w/main/jobs/run/p/u/admin/impatient', { method: 'POST', body: '{}' })).text();
      await awaitingApproval(first, patient);
      await awaitingApproval(first, impatient);
      await first.kill9();

      const second = await startServer({ dataDir, token: 'consent-admin' });
      try {
        expect((await (await second.fetch(`/api/w/main/jobs_u/get/${patient}`)).json()).status).toBe('awaiting_approval');
        const res = await second.fetch(`/api/v1/runs/${patient}/consent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approved' }) });
        expect(res.status, await res.clone().text()).toBe(200);
        expect(await waitForJob(second, patient)).toMatchObject({ status: 'success', result: { decision: 'approved', approver: 'admin' } });
        expect((await waitForJob(second, impatient, 30_000)).result).toMatchObject({ reason: 'timeout' });
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('sends a notice the process died before sending, once it is back', async () => {
    // The first delivery is held unanswered: the process is killed while it sends.
    let hold = true;
    const held: ServerResponse[] = [];
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (hold) return void held.push(res);
        received.push(body);
        res.statusCode = 204;
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-consent-notice-'));
    const first = await startServer({ dataDir, token: 'notice-admin', env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
    try {
      const flow = { path: 'u/admin/noticed', value: { modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['admin'], self_approval: true, notify: [{ channel: 'webhook', url }], message: 'pay?' } }] } };
      expect((await first.post('/api/w/main/flows/create', flow)).status).toBe(201);
      const id = await (await first.fetch('/api/w/main/jobs/run/p/u/admin/noticed', { method: 'POST', body: '{}' })).text();
      await awaitingApproval(first, id);
      await eventually(() => held.length, (n) => n > 0);
      expect(held.length).toBe(1);
      await first.kill9();
      hold = false;
      for (const res of held) res.destroy();

      const second = await startServer({ dataDir, token: 'notice-admin', env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
      try {
        const notice = await eventually(() => received.find((b) => b.includes(id)), (b) => b !== undefined);
        expect(JSON.parse(notice!)).toMatchObject({ type: 'consent.requested', data: { run_id: id, message: 'pay?' } });
        let job = await (await second.fetch(`/api/w/main/jobs_u/get/${id}`)).json();
        for (const deadline = Date.now() + 20_000; job.flow_status.gate.notices !== 'done' && Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
          job = await (await second.fetch(`/api/w/main/jobs_u/get/${id}`)).json();
        }
        expect(job.status).toBe('awaiting_approval');
        // At least once: the restarted worker and the start-up wake may both send it.
        expect(job.flow_status.gate.notices).toBe('done');
        expect(job.flow_status.gate.deliveries.length).toBeGreaterThan(0);
        for (const d of job.flow_status.gate.deliveries) expect(d).toMatchObject({ channel: 'webhook', target: url, ok: true });
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      receiver.closeAllConnections();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  }, 120_000);
});
