import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { inProcessService, json, until, type InProcessService } from './harness.js';
import { readSse } from '../../http/sse-client.js';
import type { EmailMessage } from '../../../functions/ports.js';

/**
 * ConsentGate nodes (spec 1.4, 2.7, 4.7, 7.7) in-process: the gate makes the run
 * `awaiting_approval`, tells the approvers by email and signed webhook, and the consent endpoint
 * decides it with the approval rules (approvers, self-approval, one winner); timeouts happen by
 * moving the clock. test/http/consent-gate.test.ts runs the same over HTTP in both shells.
 */

const ws = '/api/w/main';
const SECRET = `whsec_${Buffer.from('a consent webhook secret of ours').toString('base64')}`;

let s: InProcessService;
const mails: EmailMessage[] = [];
const hooks: { headers: IncomingHttpHeaders; body: string }[] = [];
let failuresLeft = 0;
let server: Server;
let hookUrl: string;

beforeAll(async () => {
  s = await inProcessService({ email: { send: async (m) => void mails.push(m) } });
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      hooks.push({ headers: req.headers, body });
      res.statusCode = failuresLeft-- > 0 ? 503 : 204;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  for (const [name, role] of [['fiona', 'operator'], ['frank', 'developer'], ['nina', 'admin'], ['olga', 'operator']]) await user(name, role);
  await s.post(`${ws}/groups/create`, { name: 'finance' });
  for (const name of ['fiona', 'frank']) await s.post(`${ws}/groups/adduser/finance`, { username: name });
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const tokens: Record<string, string> = {};
async function user(username: string, role: string) {
  await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` });
  await s.post(`${ws}/workspaces/add_user`, { username, role });
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const res = await s.fetch('/api/users/tokens/create', { ...json({ label: 'consent' }), token: null, headers: { cookie, 'content-type': 'application/json' } });
  tokens[username] = await res.text();
}

const step = (id: string, content: string, input_transforms: Record<string, unknown> = {}) => ({ id, value: { type: 'rawscript', language: 'bun', content, input_transforms } });
const js = (expr: string) => ({ type: 'javascript', expr });

function gateFlow(gate: Record<string, unknown>) {
  return {
    summary: 'Pay the supplier',
    schema: { type: 'object', properties: { amount: { type: 'number' } }, required: [] },
    value: {
      modules: [
        step('collect', 'export function main(amount: number) { return { invoice: "INV-7", amount } }', { amount: js('flow_input.amount') }),
        { id: 'gate', value: { type: 'consentgate', approvers: ['group:finance'], message: 'Pay {{ context.collect }} for {{ workflow.name }}, asked by {{ run.triggered_by }}', ...gate } },
        step('pay', 'export function main(consent: any) { return { paid: true, consent } }', { consent: js('results.gate') }),
      ],
    },
  };
}

async function createFlow(path: string, body: Record<string, unknown>) {
  const res = await s.fetch(`${ws}/flows/create`, json({ path, ...body }));
  expect(res.status, await res.clone().text()).toBe(201);
  return res;
}

async function runToGate(path: string, as = tokens.nina): Promise<string> {
  const id = await (await s.fetch(`${ws}/jobs/run/p/${path}`, { ...json({ amount: 120 }), token: as })).text();
  const job = await s.job(id);
  if (job.status !== 'awaiting_approval') throw new Error(`run is ${job.status}: ${JSON.stringify(job.result)}`);
  return id;
}

const consent = (id: string, body: unknown, token: string | null) => s.fetch(`/api/v1/runs/${id}/consent`, { ...json(body), token });

describe('ConsentGate', () => {
  it('waits for an approver, tells them by email and signed webhook, and hands the decision to the next step', async () => {
    await createFlow('u/admin/pay', gateFlow({ notify: [{ channel: 'email' }, { channel: 'webhook', url: hookUrl, secret: SECRET }] }));
    mails.length = 0;
    hooks.length = 0;
    const id = await runToGate('u/admin/pay');
    const job = await s.job(id);
    const message = 'Pay {"invoice":"INV-7","amount":120} for Pay the supplier, asked by nina';
    expect(job.flow_status.gate).toMatchObject({ module: 'gate', message, deadline: null });
    expect(mails.map((m) => m.to).sort()).toEqual(['fiona@example.com', 'frank@example.com']);
    expect(mails[0].text).toContain(message);
    expect(mails[0].text).toContain(`/api/v1/runs/${id}/consent`);

    // The webhook verifies with the Standard Webhooks library itself.
    expect(hooks).toHaveLength(1);
    const payload = new Webhook(SECRET).verify(hooks[0].body, hooks[0].headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
    expect(payload).toMatchObject({ type: 'consent.requested', data: { run_id: id, message, step_id: 'gate', approvers: ['group:finance'] } });
    expect(job.flow_status.gate.deliveries.map((d: { channel: string; ok: boolean }) => [d.channel, d.ok])).toEqual([['email', true], ['email', true], ['webhook', true]]);

    const listed = await (await s.fetch(`${ws}/jobs/list?status=awaiting_approval`)).json();
    expect(listed.map((j: { id: string }) => j.id)).toContain(id);

    const ok = await consent(id, { decision: 'approved', reason: 'invoice checked' }, tokens.fiona);
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await ok.json()).toMatchObject({ run_id: id, status: 'running', decision: { decision: 'approved', approver: 'fiona', reason: 'invoice checked' } });
    const done = await s.job(id);
    expect(done.status).toBe('success');
    expect(done.result).toMatchObject({ paid: true, consent: { decision: 'approved', approver: 'fiona', reason: 'invoice checked' } });
  });

  it('refuses non-approvers and the triggering user, and fails the run on rejection with who, why and when', async () => {
    await createFlow('u/admin/pay_reject', gateFlow({ approvers: ['group:finance', 'nina'] }));
    const id = await runToGate('u/admin/pay_reject');
    const outsider = await consent(id, { decision: 'approved', reason: 'x' }, tokens.olga);
    expect(outsider.status).toBe(403);
    expect((await outsider.json()).error.code).toBe('not_an_approver');
    const self = await consent(id, { decision: 'approved' }, tokens.nina);
    expect(self.status).toBe(403);
    expect((await self.json()).error.code).toBe('self_approval_disabled');
    expect((await s.job(id)).status).toBe('awaiting_approval');

    const no = await consent(id, { decision: 'rejected', reason: 'duplicate invoice' }, tokens.frank);
    expect(no.status).toBe(200);
    expect((await no.json()).status).toBe('failed');
    const failed = await s.job(id);
    expect(failed.status).toBe('failed');
    expect(failed.result).toMatchObject({ decision: 'rejected', approver: 'frank', reason: 'duplicate invoice', error: { name: 'ConsentRejected', step_id: 'gate' } });
    expect(typeof failed.result.at).toBe('string');
    expect(failed.flow_status.results.gate).toMatchObject({ decision: 'rejected', approver: 'frank' });
    expect(failed.flow_status.audit).toEqual([{ step: 'gate', event: 'rejected', at: failed.result.at, who: 'frank', via: 'consent endpoint', reason: 'duplicate invoice' }]);
    // Decided: a second decision is too late.
    expect((await consent(id, { decision: 'approved', reason: 'x' }, tokens.fiona)).status).toBe(409);
  });

  it('answers 400 for a bad decision or a rejection without reason, 404 for an unknown run, and lets exactly one decision win', async () => {
    await createFlow('u/admin/pay_race', gateFlow({}));
    const id = await runToGate('u/admin/pay_race');
    const bad = await consent(id, { decision: 'maybe' }, tokens.fiona);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('decision');
    const noReason = await consent(id, { decision: 'rejected' }, tokens.fiona);
    expect(noReason.status).toBe(400);
    expect(await noReason.text()).toContain('reason');
    expect((await consent('00000000-0000-4000-8000-000000000000', { decision: 'approved' }, tokens.fiona)).status).toBe(404);
    expect((await consent('not-a-run', { decision: 'approved' }, tokens.fiona)).status).toBe(404);
    expect((await s.job(id)).status).toBe('awaiting_approval');
    // Not JSON: 400, nothing decided. A token narrowed by scopes is not a person deciding: 403.
    const notJson = await s.fetch(`/api/v1/runs/${id}/consent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope', token: tokens.fiona });
    expect(notJson.status).toBe(400);
    const scoped = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'narrow', scopes: ['jobs:run:u/admin/pay_race'] }), token: tokens.fiona })).text();
    expect((await consent(id, { decision: 'approved', reason: 'x' }, scoped)).status).toBe(403);
    expect((await s.job(id)).status).toBe('awaiting_approval');

    const answers = await Promise.all([
      consent(id, { decision: 'approved', reason: 'ok' }, tokens.fiona),
      consent(id, { decision: 'rejected', reason: 'no' }, tokens.frank),
      consent(id, { decision: 'approved', reason: 'ok too' }, tokens.frank),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
  });

  it('rejects with reason timeout when nobody decides in time, and not a moment before', async () => {
    await createFlow('u/admin/pay_late', gateFlow({ timeout: 60 }));
    const id = await runToGate('u/admin/pay_late');
    s.clock.advance(59_000);
    await s.flows.wakeDue(s.clock.now());
    expect((await s.job(id)).status).toBe('awaiting_approval');
    s.clock.advance(2_000);
    await s.flows.wakeDue(s.clock.now());
    const late = await s.job(id);
    expect(late.status).toBe('failed');
    expect(late.result).toMatchObject({ decision: 'rejected', approver: null, reason: 'timeout', error: { name: 'ConsentTimeout' } });
    expect((await consent(id, { decision: 'approved', reason: 'sorry' }, tokens.fiona)).status).toBe(409);
  });

  it('answers 409 once the run was canceled', async () => {
    await createFlow('u/admin/pay_cancel', gateFlow({}));
    const id = await runToGate('u/admin/pay_cancel');
    expect((await s.post(`${ws}/jobs_u/queue/cancel/${id}`, {})).status).toBe(200);
    expect((await s.job(id)).status).toBe('canceled');
    expect((await consent(id, { decision: 'approved', reason: 'too late' }, tokens.fiona)).status).toBe(409);
  });

  it('tells SSE followers that the run awaits approval, then that it finished', async () => {
    await createFlow('u/admin/pay_sse', gateFlow({}));
    const id = await runToGate('u/admin/pay_sse');
    const events = await readSse(await s.fetch(`${ws}/job_u/getupdate_sse/${id}`), (e) => {
      if (e.status === 'awaiting_approval' && !e.completed) void consent(id, { decision: 'approved', reason: 'seen live' }, tokens.frank);
    });
    expect(events[0]).toMatchObject({ type: 'update', status: 'awaiting_approval' });
    expect(events.at(-1)).toMatchObject({ completed: true, status: 'success' });
  });

  it('decides a gate inside a branch through the run\'s own id', async () => {
    const gate = { id: 'inner_gate', value: { type: 'consentgate', approvers: ['frank'], message: 'inside' } };
    const res = await s.fetch(`${ws}/flows/create`, json({ path: 'u/admin/branch_gate', value: { modules: [{ id: 'pick', value: { type: 'branchone', branches: [{ expr: 'true', modules: [gate] }], default: [] } }] } }));
    expect(res.status).toBe(201);
    const id = await (await s.post(`${ws}/jobs/run/p/u/admin/branch_gate`, {})).text();
    await s.job(id);
    const ok = await consent(id, { decision: 'approved', reason: 'nested' }, tokens.frank);
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await s.job(id)).toMatchObject({ status: 'success', result: { decision: 'approved', approver: 'frank', reason: 'nested' } });
  });

  it('retries a failing webhook with backoff, records every attempt, and never holds the run', async () => {
    await createFlow('u/admin/pay_flaky', gateFlow({ notify: [{ channel: 'webhook', url: hookUrl }, { channel: 'webhook', url: 'http://127.0.0.1:1/nothing-listens' }] }));
    failuresLeft = 1;
    const id = await runToGate('u/admin/pay_flaky');
    const job = await until(() => s.job(id), (j) => (j.flow_status.gate?.deliveries ?? []).length >= 5);
    const attempts = job.flow_status.gate.deliveries.map((d: { target: string; attempt: number; ok: boolean }) => [d.target, d.attempt, d.ok]);
    expect(attempts).toEqual([
      [hookUrl, 1, false],
      [hookUrl, 2, true],
      ['http://127.0.0.1:1/nothing-listens', 1, false],
      ['http://127.0.0.1:1/nothing-listens', 2, false],
      ['http://127.0.0.1:1/nothing-listens', 3, false],
    ]);
    expect(job.status).toBe('awaiting_approval');
    // A retry is the same message (Standard Webhooks): one webhook-id, so a receiver can tell a repeat.
    const tries = hooks.filter((h) => h.body.includes(id));
    expect(tries).toHaveLength(2);
    expect(new Set(tries.map((h) => h.headers['webhook-id'])).size).toBe(1);
    expect((await consent(id, { decision: 'approved', reason: 'fine' }, tokens.frank)).status).toBe(200);
    expect((await s.job(id)).status).toBe('success');
  });

  it('refuses sns channels and chat channels naming no connection at create time, and warns about placeholders that will render empty', async () => {
    const sns = await s.fetch(`${ws}/flows/create`, json({ path: 'u/admin/pay_sns', ...gateFlow({ notify: [{ channel: 'sns' }] }) }));
    expect(sns.status).toBe(400);
    expect((await sns.json()).error.message).toContain('the sns channel is not available');
    // The chat channel works (test/http/chat-approvals.test.ts) with a slack connection and a channel.
    const chat = await s.fetch(`${ws}/flows/create`, json({ path: 'u/admin/pay_chat', ...gateFlow({ notify: [{ channel: 'chat', team: 'x' }] }) }));
    expect(chat.status).toBe(400);
    expect((await chat.json()).error.message).toContain('resource');
    const res = await createFlow('u/admin/pay_typo', gateFlow({ message: 'Pay {{ context.colect }} / {{ context.amount }} / {{ context.pay }}' }));
    const warning = res.headers.get('svc-warning') ?? '';
    expect(warning).toContain('{{ context.colect }}');
    expect(warning).toContain('{{ context.pay }}');
    expect(warning).not.toContain('context.amount');
    expect((await s.fetch(`${ws}/flows/create`, json({ path: 'u/admin/pay_bad', ...gateFlow({ approvers: [] }) }))).status).toBe(400);
  });

  it('sends gate webhooks through the SSRF-guarded client: a loopback receiver is refused unless the instance allows private addresses', async () => {
    const guarded = await inProcessService({ webhookAllowPrivate: false });
    const flow = { modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['admin'], self_approval: true, message: 'ok?', notify: [{ channel: 'webhook', url: hookUrl }] } }] };
    expect((await guarded.post(`${ws}/flows/create`, { path: 'u/admin/internal_hook', value: flow })).status).toBe(201);
    const before = hooks.length;
    const id = await (await guarded.post(`${ws}/jobs/run/p/u/admin/internal_hook`, {})).text();
    const job = await until(() => guarded.job(id), (j) => (j.flow_status.gate?.deliveries ?? []).length >= 1 && j.flow_status.gate.notices === 'done');
    expect(job.status).toBe('awaiting_approval');
    expect(job.flow_status.gate.deliveries.every((d: { ok: boolean }) => !d.ok)).toBe(true);
    expect(job.flow_status.gate.deliveries[0].error).toContain('refused');
    expect(hooks.length).toBe(before);
  });

  it('publishes to SNS where the instance has it (the AWS shell): the approvals topic unless the gate names one', async () => {
    const published: { topicArn: string | null; subject: string; text: string }[] = [];
    const aws = await inProcessService({ topics: { publish: async (n) => void published.push(n) } });
    const topic = 'arn:aws:sns:eu-west-1:123456789012:finance';
    const flow = { modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['admin'], self_approval: true, message: 'ok?', notify: [{ channel: 'sns' }, { channel: 'sns', topic_arn: topic }] } }] };
    expect((await aws.post(`${ws}/flows/create`, { path: 'u/admin/sns_gate', value: flow })).status).toBe(201);
    const id = await (await aws.post(`${ws}/jobs/run/p/u/admin/sns_gate`, {})).text();
    const job = await aws.job(id);
    expect(job.status).toBe('awaiting_approval');
    expect(published.map((p) => p.topicArn)).toEqual([null, topic]);
    expect(JSON.parse(published[0].text)).toMatchObject({ type: 'consent.requested', data: { run_id: id, message: 'ok?' } });
    expect(job.flow_status.gate.deliveries.map((d: { channel: string; target: string; ok: boolean }) => [d.channel, d.target, d.ok])).toEqual([['sns', 'approvals topic', true], ['sns', topic, true]]);
  });

  it('delivers an SNS notice whose message names a flow input of megabytes: the rendered message is cut, not the notice lost', async () => {
    // SNS refuses a message over 256 KB, as this fake does: a notice carrying the whole input was never delivered.
    const published: string[] = [];
    const aws = await inProcessService({
      topics: {
        publish: async (n) => {
          if (Buffer.byteLength(n.text) > 256 * 1024) throw new Error('InvalidParameter: Message too long');
          published.push(n.text);
        },
      },
      maxBodyBytes: 8 * 1024 * 1024,
    });
    const flow = { modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['admin'], self_approval: true, message: 'pay {{ context.invoice }}?', notify: [{ channel: 'sns' }] } }] };
    expect((await aws.post(`${ws}/flows/create`, { path: 'u/admin/big_gate', value: flow })).status).toBe(201);
    const id = await (await aws.post(`${ws}/jobs/run/p/u/admin/big_gate`, { invoice: '€'.repeat(1_000_000) })).text();
    const job = await aws.job(id);
    expect(job.status).toBe('awaiting_approval');
    expect(job.flow_status.gate.deliveries.map((d: { ok: boolean; error?: string }) => [d.ok, d.error])).toEqual([[true, undefined]]);
    const message = JSON.parse(published[0]).data.message as string;
    expect(message.length).toBeLessThanOrEqual(20_000);
    expect(message.startsWith('pay €€€')).toBe(true);
    expect(message.endsWith('[... cut at 20000 characters]')).toBe(true);
    expect(job.flow_status.gate.message).toBe(message);
  });
});
