import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync, signUpMember, startServer, waitForJob, type Member, type TestServer } from './harness.js';
import { startFakeSlack, type FakeSlack, type SlackMessage, type SlackUser } from './fake-slack.js';

/**
 * Chat approvals with Slack (README: Chat approvals), over HTTP against either shell and a fake
 * Slack on loopback: an approval step with a form asks in two channels through the client
 * library; a non-approver's click is refused with an ephemeral message; the approver opens the
 * modal, submits, and the flow resumes with the values and the approver while both messages show
 * the outcome. Forged, stale, unsigned and malformed callbacks change nothing.
 */

let s: TestServer;
let slack: FakeSlack;
const ALICE: SlackUser = { id: 'U0ALICE', name: 'alice.s', email: 'Alice@Example.com' };
const BOB: SlackUser = { id: 'U0BOB', name: 'bob.s', email: 'bob@example.com' };
const STRANGER: SlackUser = { id: 'U0STRANGE', name: 'stranger', email: 'someone@elsewhere.test' };
/** The bootstrap admin, who starts the flows here. */
const ADMIN: SlackUser = { id: 'U0ADMIN', name: 'admin.s', email: 'admin@svc.local' };

const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

beforeAll(async () => {
  slack = await startFakeSlack([ALICE, BOB, STRANGER, ADMIN], ['C0REFUNDS', 'C0FINANCE']);
  // The fake Slack is on loopback: the instance must allow private addresses (its SSRF guard).
  s = await startServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
  for (const name of ['alice', 'bob']) {
    expect((await s.post('/api/users/create', { username: name, email: `${name}@example.com`, password: `${name}-password-1` })).status).toBe(201);
    expect((await s.post(`${ws()}/workspaces/add_user`, { username: name, role: 'operator' })).status).toBe(201);
  }
  // The workspace admin connects the Slack app in the workspace settings; flows only name it.
  const connected = await s.post(`${ws()}/workspaces/chat_connections/slack`, { platform: 'slack', bot_token: slack.token, signing_secret: slack.signingSecret, api_url: slack.apiUrl });
  expect(connected.status).toBe(200);
  expect(JSON.stringify(await connected.json())).not.toContain(slack.signingSecret);
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await slack?.close();
});

const FORM = {
  schema: {
    properties: { amount: { type: 'number', description: 'Amount to refund' }, reason: { type: 'string' }, currency: { type: 'string' } },
    required: ['reason'],
    order: ['reason', 'amount', 'currency'],
  },
};

const ASK_TS = `import * as svc from 'svc-client';
export async function main(channels: string[], approver: string) {
  const asked = [];
  for (const channelId of channels) {
    asked.push(await svc.requestInteractiveChatApproval({
      chatResourcePath: 'slack', channelId, message: 'Refund 12 EUR for order 42?', approver,
      defaultArgsJson: { reason: 'looks fine', amount: 12 }, dynamicEnumsJson: { currency: ['EUR', 'USD'] },
    }));
  }
  return { asked };
}`;

const ASK_PY = `import svc
def main(channels: list, approver: str):
    return {"asked": [svc.request_interactive_chat_approval("slack", c, "Delete the staging database?", approver=approver or None) for c in channels]}
`;

const AFTER = `export function main(resume: any, approvers: string[]) { return { resume, approvers } }`;

function flow(language: 'bun' | 'python3', content: string, suspend: Record<string, unknown>) {
  return {
    modules: [
      {
        id: 'ask',
        value: { type: 'rawscript', language, content, input_transforms: { channels: { type: 'javascript', expr: 'flow_input.channels' }, approver: { type: 'javascript', expr: 'flow_input.approver' } } },
        suspend,
      },
      { id: 'after', value: { type: 'rawscript', language: 'bun', content: AFTER, input_transforms: { resume: { type: 'javascript', expr: 'resume' }, approvers: { type: 'javascript', expr: 'approvers' } } } },
    ],
  };
}

async function runUntilSuspended(path: string, value: unknown, args: unknown): Promise<{ id: string; job: any }> {
  expect((await s.fetch(`${ws()}/flows/create`, json({ path, value }))).status).toBe(201);
  const id = await (await s.fetch(`${ws()}/jobs/run/p/${path}`, json(args))).text();
  const deadline = Date.now() + 30_000;
  for (;;) {
    const job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    if (job.status === 'suspended') return { id, job };
    if (['success', 'failed', 'canceled'].includes(job.status)) throw new Error(`flow ended as ${job.status}: ${JSON.stringify(job.result)}`);
    if (Date.now() > deadline) throw new Error(`flow still ${job.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Posts a signed interaction to the workspace's interactivity URL, as Slack does. */
function deliver(payload: unknown, opts?: { secret?: string; timestamp?: number }): Promise<Response> {
  const { body, headers } = slack.interaction(payload, opts);
  return s.fetch(`${ws()}/chat/slack/interactions`, { method: 'POST', headers, body, token: null });
}

const buttons = (m: SlackMessage) => m.blocks.filter((b: any) => b.type === 'actions');
const status = async (id: string) => (await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).status;

describe('Slack chat approvals', () => {
  it('asks in two channels, refuses a non-approver, takes the form from the modal and shows the outcome in both messages', async () => {
    const before = slack.messages.length;
    const { id, job } = await runUntilSuspended('u/admin/refund_chat', flow('bun', ASK_TS, { required_events: 1, timeout: 600, resume_form: FORM }), { channels: ['C0REFUNDS', 'C0FINANCE'], approver: 'alice' });
    const asked = job.flow_status.results.ask.asked;
    expect(asked.map((a: any) => [a.channel, a.posted])).toEqual([['C0REFUNDS', true], ['C0FINANCE', true]]);
    const [inRefunds, inFinance] = slack.messages.slice(before);
    expect([inRefunds.channel, inFinance.channel]).toEqual(['C0REFUNDS', 'C0FINANCE']);
    expect(inRefunds.text).toBe('Refund 12 EUR for order 42?');
    expect(buttons(inRefunds)[0].elements.map((e: any) => e.text.text)).toEqual(['Approve', 'Reject']);
    // The bot token reached Slack in the Authorization header only: never in a message, never to the job.
    const posts = slack.calls.filter((c) => c.method === 'chat.postMessage');
    expect(posts.every((c) => c.headers.authorization === `Bearer ${slack.token}` && !c.body.includes(slack.token) && !c.body.includes(slack.signingSecret))).toBe(true);
    expect(JSON.stringify(job)).not.toContain(slack.token);
    // Kept for later: a click on the other message once the step is decided (a stale client may still show it).
    const staleClick = slack.click(inFinance, 'svc_approve', ALICE);

    // Bob is a member but not the approver: refused, told so privately, nothing changes.
    const byBob = await deliver(slack.click(inRefunds, 'svc_approve', BOB));
    expect(byBob.status).toBe(403);
    expect(slack.ephemerals.at(-1)).toMatchObject({ channel: 'C0REFUNDS', user: BOB.id });
    expect(slack.ephemerals.at(-1)!.text).toContain('only alice may decide');
    // A Slack user whose email no svc user has maps to nobody.
    const byStranger = await deliver(slack.click(inRefunds, 'svc_approve', STRANGER));
    expect(byStranger.status).toBe(403);
    expect(slack.ephemerals.at(-1)!.text).toContain('no svc user has the email someone@elsewhere.test');
    expect(slack.views).toHaveLength(0);
    expect(await status(id)).toBe('suspended');

    // Alice's click opens the form in a modal: fields in order, prefilled, with the runtime choices.
    const click = await deliver(slack.click(inRefunds, 'svc_approve', ALICE));
    expect(click.status).toBe(200);
    const modal = slack.views.at(-1)!.view;
    const inputs = modal.blocks.filter((b: any) => b.type === 'input');
    expect(inputs.map((b: any) => b.block_id)).toEqual(['reason', 'amount', 'currency']);
    expect(inputs[0].element).toMatchObject({ type: 'plain_text_input', initial_value: 'looks fine' });
    expect(inputs[0].optional).toBe(false);
    expect(inputs[1]).toMatchObject({ label: { text: 'Amount to refund' }, element: { type: 'number_input', initial_value: '12' } });
    expect(inputs[2].element.options.map((o: any) => o.value)).toEqual(['EUR', 'USD']);
    expect(await status(id)).toBe('suspended');

    // A required field left empty goes back into the modal; the step still waits.
    const empty = await deliver(slack.submit(ALICE, { amount: '12' }));
    expect(empty.status).toBe(200);
    expect((await empty.json()).errors).toHaveProperty('reason');
    expect(await status(id)).toBe('suspended');

    const submitted = await deliver(slack.submit(ALICE, { reason: 'customer called', amount: '12.5', currency: 'USD' }));
    expect(submitted.status).toBe(200);
    const done = await waitForJob(s, id, 30_000);
    expect(done.status).toBe('success');
    expect(done.result).toEqual({ resume: { reason: 'customer called', amount: 12.5, currency: 'USD' }, approvers: ['alice'] });

    // Both messages say who decided; neither has buttons any more.
    for (const m of [inRefunds, inFinance]) {
      expect(buttons(m)).toHaveLength(0);
      expect(m.text).toMatch(/Approved by alice \(@alice\.s\) at \d{4}-/);
    }
    // A click on the decided message is refused, and told why.
    const late = await deliver(staleClick);
    expect(late.status).toBe(409);
    expect(slack.ephemerals.at(-1)).toMatchObject({ user: ALICE.id });
  });

  it("applies the step's rules to the mapped user: no self-approval, group membership; no Reject button when it cannot be canceled", async () => {
    expect((await s.post(`${ws()}/groups/create`, { name: 'finance' })).status).toBeLessThan(300);
    expect((await s.post(`${ws()}/groups/adduser/finance`, { username: 'alice' })).status).toBeLessThan(300);
    const before = slack.messages.length;
    const suspend = { required_events: 1, self_approval_disabled: true, hide_cancel: true, user_groups_required: 'finance' };
    const { id } = await runUntilSuspended('u/admin/ruled', flow('bun', ASK_TS, suspend), { channels: ['C0REFUNDS'], approver: '' });
    const message = slack.messages[before];
    expect(buttons(message)[0].elements.map((e: any) => e.action_id)).toEqual(['svc_approve']);
    const byAdmin = await deliver(slack.click(message, 'svc_approve', ADMIN));
    expect(byAdmin.status).toBe(403);
    expect((await byAdmin.json()).error.code).toBe('self_approval_disabled');
    expect(slack.ephemerals.at(-1)).toMatchObject({ user: ADMIN.id });
    const byBob = await deliver(slack.click(message, 'svc_approve', BOB));
    expect(byBob.status).toBe(403);
    expect(slack.ephemerals.at(-1)!.text).toContain('only members of finance');
    // A Reject forged from an Approve button: the step cannot be canceled.
    const reject = slack.click(message, 'svc_approve', ALICE) as any;
    reject.actions[0].action_id = 'svc_reject';
    expect((await deliver(reject)).status).toBe(403);
    expect(await status(id)).toBe('suspended');
    expect((await deliver(slack.click(message, 'svc_approve', ALICE))).status).toBe(200);
    expect((await waitForJob(s, id, 30_000)).result.approvers).toEqual(['alice']);
  });

  it('refuses forged, stale, unsigned and malformed callbacks, and changes nothing', async () => {
    const before = slack.messages.length;
    const { id } = await runUntilSuspended('u/admin/guarded', flow('bun', ASK_TS, { required_events: 1 }), { channels: ['C0REFUNDS'], approver: 'alice' });
    const message = slack.messages[before];
    const click = slack.click(message, 'svc_approve', ALICE);
    const now = Math.floor(Date.now() / 1000);
    expect((await deliver(click, { secret: 'not-the-signing-secret' })).status).toBe(401);
    expect((await deliver(click, { timestamp: now - 6 * 60 })).status).toBe(401);
    expect((await deliver(click, { timestamp: now + 6 * 60 })).status).toBe(401);
    const { body } = slack.interaction(click);
    expect((await s.fetch(`${ws()}/chat/slack/interactions`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body, token: null })).status).toBe(401);
    // A valid signature over a body that is not an interaction, or names no button of ours.
    const raw = (text: string) => {
      const signed = slack.interaction({});
      const timestamp = signed.headers['x-slack-request-timestamp'];
      const signature = `v0=${createHmac('sha256', slack.signingSecret).update(`v0:${timestamp}:${text}`).digest('hex')}`;
      return s.fetch(`${ws()}/chat/slack/interactions`, { method: 'POST', headers: { ...signed.headers, 'x-slack-signature': signature }, body: text, token: null });
    };
    expect((await raw('payload=%7Bnot%20json')).status).toBe(400);
    expect((await raw('nothing=here')).status).toBe(400);
    expect((await deliver({ ...click, actions: [{ ...(click.actions as any[])[0], action_id: 'delete_everything' }] })).status).toBe(400);
    expect((await deliver({ ...click, type: 'shortcut' })).status).toBe(400);
    expect((await deliver({ ...click, actions: [{ ...(click.actions as any[])[0], value: '00000000-0000-0000-0000-000000000000.aaaaaaaaaaaaaaaa' }] })).status).toBe(404);
    expect(await status(id)).toBe('suspended');
    expect(buttons(message)).toHaveLength(1);

    // The same click, signed and fresh, decides (no form: straight away).
    expect((await deliver(click)).status).toBe(200);
    expect((await waitForJob(s, id, 30_000)).result.approvers).toEqual(['alice']);
  });

  it('rejects from Slack through the Python client, and the flow is canceled with who rejected', async () => {
    const before = slack.messages.length;
    const { id, job } = await runUntilSuspended('u/admin/drop_db', flow('python3', ASK_PY, { required_events: 1 }), { channels: ['C0FINANCE'], approver: '' });
    expect(job.flow_status.results.ask.asked[0]).toMatchObject({ channel: 'C0FINANCE', posted: true });
    const message = slack.messages[before];
    expect(message.text).toBe('Delete the staging database?');
    expect((await deliver(slack.click(message, 'svc_reject', BOB))).status).toBe(200);
    const done = await waitForJob(s, id, 30_000);
    expect(done.status).toBe('canceled');
    expect(done.result.error.message).toContain('rejected in Slack by bob');
    expect(message.text).toMatch(/Rejected by bob \(@bob\.s\)/);
    expect(buttons(message)).toHaveLength(0);
  });

  it('keeps the approval when Slack cannot be reached: the step gets its resume URLs and says why', async () => {
    slack.failNext('chat.postMessage', 3);
    const { id, job } = await runUntilSuspended('u/admin/unposted', flow('bun', ASK_TS, { required_events: 1 }), { channels: ['C0REFUNDS'], approver: 'alice' });
    const asked = job.flow_status.results.ask.asked[0];
    expect(asked).toMatchObject({ posted: false, ts: null });
    expect(asked.error).toContain('chat.postMessage');
    // The failed post is on the run, for whoever looks at it.
    const [record] = job.flow_status.chat;
    expect(record).toMatchObject({ channel: 'C0REFUNDS', ts: null, deliveries: [{ method: 'chat.postMessage', ok: false }] });
    expect(record.deliveries[0].error).toContain('HTTP 500');
    const url = asked.resume.replace(/^https?:\/\/[^/]+/, '');
    expect((await s.fetch(url, { ...json({}), token: null })).status).toBe(200);
    expect((await waitForJob(s, id, 30_000)).status).toBe('success');
  });

  it('answers 4xx to a request with a channel Slack does not know, or a connection that is not a slack one', async () => {
    const { id } = await runUntilSuspended('u/admin/wrong_channel', flow('bun', ASK_TS, { required_events: 1 }), { channels: ['C0NOWHERE'], approver: 'alice' });
    const asked = (await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).flow_status.results.ask.asked[0];
    expect(asked).toMatchObject({ posted: false, error: 'Slack chat.postMessage failed: channel_not_found' });
    // From outside a step: a job that is not an approval step is refused, and so is a step decided already.
    const plain = await s.fetch(`${ws()}/chat/slack/request_approval/${id}`, json({ chat_resource_path: 'slack', channel_id: 'C0REFUNDS', message: 'hi' }));
    expect(plain.status).toBe(400);
    const stepJob = (await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).flow_status.suspend.step_job;
    const late = async (path: string) => (await s.fetch(`${ws()}/chat/slack/request_approval/${stepJob}`, json({ chat_resource_path: path, channel_id: 'C0REFUNDS', message: 'hi' }))).status;
    expect(await late('no_such_connection')).toBe(400);
    await s.fetch(`${ws()}/jobs_u/queue/cancel/${id}`, json({ reason: 'done here' }));
    await waitForJob(s, id, 30_000);
    expect(await late('slack')).toBe(409);
    const missing = await s.fetch(`${ws()}/chat/slack/request_approval/${id}`, json({ channel_id: 'C0REFUNDS', message: 'hi' }));
    expect(missing.status).toBe(400);
  });

  describe('who may ask a chat for approvals', () => {
    let viewer: Member;
    const ask = (job: string, token: string, message = 'Approve the payout to IBAN DE00 1234?') =>
      s.fetch(`${ws()}/chat/slack/request_approval/${job}`, { ...json({ chat_resource_path: 'slack', channel_id: 'C0FINANCE', message }), token });
    const posts = () => slack.calls.filter((c) => c.method === 'chat.postMessage').length;
    const stepOf = async (id: string) => (await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).flow_status.suspend.step_job as string;

    beforeAll(async () => {
      // A member who may read (and run) the folder's flows and their jobs, and nothing more.
      viewer = await signUpMember(s, 'viewer', 'operator');
      expect((await s.post(`${ws()}/folders/create`, { name: 'chatops', extra_perms: { 'u/viewer': false } })).status).toBe(201);
    });

    it("refuses a member who can read the step's job, and the one who started the flow, before looking the job up; a workspace admin may ask", async () => {
      const { id } = await runUntilSuspended('f/chatops/payout', flow('bun', ASK_TS, { required_events: 1 }), { channels: [], approver: '' });
      const stepJob = await stepOf(id);
      expect((await s.fetch(`${ws()}/jobs_u/get/${stepJob}`, { token: viewer.token })).status).toBe(200);
      const before = posts();

      const refused = await ask(stepJob, viewer.token);
      expect(refused.status).toBe(403);
      const body = await refused.json();
      expect(body.error.message).toContain('only the approval step itself');
      // An unknown job answers alike: nothing tells the viewer whether the job exists.
      const unknownJob = '00000000-0000-4000-8000-000000000000';
      const unknown = await ask(unknownJob, viewer.token);
      expect(unknown.status).toBe(403);
      expect(JSON.stringify(await unknown.json()).replaceAll(unknownJob, 'JOB')).toBe(JSON.stringify(body).replaceAll(stepJob, 'JOB'));
      // With the viewer's login session too.
      const bySession = await s.fetch(`${ws()}/chat/slack/request_approval/${stepJob}`, { ...json({ chat_resource_path: 'slack', channel_id: 'C0FINANCE', message: 'hi' }), token: null, headers: { cookie: viewer.cookie, 'content-type': 'application/json' } });
      expect(bySession.status).toBe(403);
      // The Teams entry points of the same step refuse as well.
      expect((await s.fetch(`${ws()}/chat/teams/request_approval/${stepJob}`, { ...json({ team_name: 'Finance', channel_name: 'approvals', message: 'hi' }), token: viewer.token })).status).toBe(403);
      expect((await s.fetch(`${ws()}/chat/teams/send_message/${stepJob}`, { ...json({ conversation_id: '19:x', text: 'hi' }), token: viewer.token })).status).toBe(403);

      // The one who started a run is not its approval step either.
      const own = await (await s.fetch(`${ws()}/jobs/run/p/f/chatops/payout`, { ...json({ channels: [], approver: '' }), token: viewer.token })).text();
      await expect.poll(async () => status(own)).toBe('suspended');
      const byStarter = await ask(await stepOf(own), viewer.token);
      expect(byStarter.status).toBe(403);
      expect((await byStarter.json()).error.message).toContain('only the approval step itself');
      expect(posts()).toBe(before);
      expect(await status(id)).toBe('suspended');

      // A workspace admin, as a person, may ask (again) for a waiting step.
      const byAdmin = await ask(stepJob, s.token, 'Payout 1: please decide');
      expect(byAdmin.status).toBe(200);
      expect(await byAdmin.json()).toMatchObject({ channel: 'C0FINANCE', posted: true });
      expect(posts()).toBe(before + 1);
      expect(slack.messages.at(-1)!.text).toBe('Payout 1: please decide');
      for (const run of [id, own]) await s.fetch(`${ws()}/jobs_u/queue/cancel/${run}`, json({ reason: 'done here' }));
    });

    it("refuses a job's token for any job but its own, an admin's job included", async () => {
      const { id } = await runUntilSuspended('u/admin/payout_target', flow('bun', ASK_TS, { required_events: 1 }), { channels: [], approver: '' });
      const stepJob = await stepOf(id);
      const content = `import * as svc from 'svc-client';
export async function main(target: string) {
  const own = process.env.OV_JOB_ID;
  process.env.OV_JOB_ID = target;
  try {
    await svc.requestInteractiveChatApproval({ chatResourcePath: 'slack', channelId: 'C0FINANCE', message: 'Approve the payout to IBAN DE00 1234?' });
    return { status: 200, own };
  } catch (e: any) {
    return { status: e.status, message: e.message, own };
  }
}`;
      expect((await s.post(`${ws()}/scripts/create`, { path: 'u/admin/ask_for_other', language: 'bun', content })).status).toBe(201);
      const before = posts();
      const { status: code, body } = await runSync(s, 'u/admin/ask_for_other', { target: stepJob });
      expect(code).toBe(200);
      expect(body.status).toBe(403);
      expect(body.message).toContain(`the token of job ${body.own} may not ask for job ${stepJob}`);
      expect(posts()).toBe(before);
      await s.fetch(`${ws()}/jobs_u/queue/cancel/${id}`, json({ reason: 'done here' }));
    });

    it('bounds the messages of one step: the eleventh is refused with 409 and not posted', async () => {
      const content = `import * as svc from 'svc-client';
export async function main() {
  const answers = [];
  for (let i = 0; i < 11; i++) {
    try {
      const a = await svc.requestInteractiveChatApproval({ chatResourcePath: 'slack', channelId: 'C0FINANCE', message: 'Ask ' + i });
      answers.push(a.posted ? 'posted' : a.error);
    } catch (e: any) {
      answers.push(e.status + ' ' + e.message);
    }
  }
  return answers;
}`;
      const value = { modules: [{ id: 'ask', value: { type: 'rawscript', language: 'bun', content, input_transforms: {} }, suspend: { required_events: 1 } }] };
      const before = posts();
      const { id, job } = await runUntilSuspended('u/admin/loud', value, {});
      const answers: string[] = job.flow_status.results.ask;
      expect(answers.slice(0, 10)).toEqual(Array(10).fill('posted'));
      expect(answers[10]).toMatch(/^409 .*asked a chat 10 times, the most a step may/);
      expect(posts()).toBe(before + 10);
      expect(job.flow_status.chat).toHaveLength(10);
      // The bound holds for an admin asking from outside too.
      const byAdmin = await ask(job.flow_status.suspend.step_job, s.token);
      expect(byAdmin.status).toBe(409);
      expect((await byAdmin.json()).error.code).toBe('too_many_chat_messages');
      expect(posts()).toBe(before + 10);
      await s.fetch(`${ws()}/jobs_u/queue/cancel/${id}`, json({ reason: 'done here' }));
    });
  });

  describe('ConsentGate chat channel', () => {
    const gateFlow = (approvers: string[]) => ({
      modules: [
        {
          id: 'gate',
          value: { type: 'consentgate', approvers, message: 'Pay {{ context.amount }} EUR to ACME?', notify: [{ channel: 'chat', resource: 'slack', channel_id: 'C0FINANCE' }] },
        },
        { id: 'pay', value: { type: 'rawscript', language: 'bun', content: 'export function main(d: any) { return d }', input_transforms: { d: { type: 'javascript', expr: 'results.gate' } } } },
      ],
    });

    async function awaitingGate(path: string): Promise<{ id: string; message: SlackMessage }> {
      expect((await s.fetch(`${ws()}/flows/create`, json({ path, value: gateFlow(['alice']) }))).status).toBe(201);
      const before = slack.messages.length;
      const id = await (await s.fetch(`${ws()}/jobs/run/p/${path}`, json({ amount: 1200 }))).text();
      const deadline = Date.now() + 30_000;
      while (slack.messages.length === before || (await status(id)) !== 'awaiting_approval') {
        if (Date.now() > deadline) throw new Error(`no gate message; run ${await status(id)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return { id, message: slack.messages[before] };
    }

    it('is rejected from Slack with a reason asked in a modal, and the run fails with it', async () => {
      const { id, message } = await awaitingGate('u/admin/pay_acme');
      expect(message).toMatchObject({ channel: 'C0FINANCE', text: 'Pay 1200 EUR to ACME?' });
      const reject = slack.click(message, 'svc_reject', ALICE);

      // Bob is not an approver of the gate: refused as the consent endpoint refuses him.
      expect((await deliver(slack.click(message, 'svc_reject', BOB))).status).toBe(403);
      expect(slack.ephemerals.at(-1)!.text).toContain('bob is not an approver');
      expect(slack.views.filter((v) => v.view.callback_id === 'svc_reject_reason')).toHaveLength(0);

      expect((await deliver(reject)).status).toBe(200);
      expect(slack.views.at(-1)!.view.callback_id).toBe('svc_reject_reason');
      const noReason = await deliver(slack.submit(ALICE, { reason: '  ' }));
      expect(await noReason.json()).toEqual({ response_action: 'errors', errors: { reason: 'a rejection needs a reason' } });
      expect(await status(id)).toBe('awaiting_approval');

      expect((await deliver(slack.submit(ALICE, { reason: 'not in the budget' }))).status).toBe(200);
      const done = await waitForJob(s, id, 30_000);
      expect(done.status).toBe('failed');
      expect(done.result).toMatchObject({ decision: 'rejected', approver: 'alice', reason: 'not in the budget' });
      expect(done.result.error.message).toContain('rejected by alice: not in the budget');
      expect(message.text).toMatch(/Rejected by alice \(@alice\.s\) at .*: not in the budget/);
      expect(buttons(message)).toHaveLength(0);
      // A click from a stale view of the message: already decided.
      expect((await deliver(reject)).status).toBe(409);
    });

    it('is approved from Slack, and the next step sees the decision', async () => {
      const { id, message } = await awaitingGate('u/admin/pay_acme_ok');
      expect((await deliver(slack.click(message, 'svc_approve', ALICE))).status).toBe(200);
      const done = await waitForJob(s, id, 30_000);
      expect(done.status).toBe('success');
      expect(done.result).toMatchObject({ decision: 'approved', approver: 'alice' });
      expect(message.text).toMatch(/Approved by alice/);
    });

    it('records a chat notice Slack refused and keeps the gate waiting for the consent endpoint', async () => {
      const path = 'u/admin/pay_unposted';
      const value = { modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['admin'], self_approval: true, message: 'Pay?', notify: [{ channel: 'chat', resource: 'slack', channel_id: 'C0FINANCE' }] } }] };
      expect((await s.fetch(`${ws()}/flows/create`, json({ path, value }))).status).toBe(201);
      // Every try fails: three notice attempts, each with its own retries of the call.
      slack.failNext('chat.postMessage', 9);
      const id = await (await s.fetch(`${ws()}/jobs/run/p/${path}`, json({}))).text();
      const deadline = Date.now() + 30_000;
      let gate: any;
      for (;;) {
        gate = (await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).flow_status?.gate;
        if (gate?.notices === 'done') break;
        if (Date.now() > deadline) throw new Error(`notices still ${gate?.notices}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(gate.deliveries.map((d: any) => [d.channel, d.target, d.ok])).toEqual([1, 2, 3].map(() => ['chat', 'slack C0FINANCE', false]));
      expect(gate.deliveries[0].error).toContain('HTTP 500');
      slack.failNext('chat.postMessage', 0);
      expect(await status(id)).toBe('awaiting_approval');
      expect((await s.fetch(`/api/v1/runs/${id}/consent`, json({ decision: 'approved' }))).status).toBe(200);
      expect((await waitForJob(s, id, 30_000)).status).toBe('success');
    });

    it("refuses a gate whose chat connection is not one of the workspace's when the flow is created", async () => {
      const flowWith = (resource: string) => ({ modules: [{ id: 'g', value: { type: 'consentgate', approvers: ['alice'], notify: [{ channel: 'chat', resource, channel_id: 'C0FINANCE' }] } }] });
      const missing = await s.fetch(`${ws()}/flows/create`, json({ path: 'u/admin/no_conn', value: flowWith('u/admin/nothing_here') }));
      expect(missing.status).toBe(400);
      expect((await missing.json()).error.message).toContain('value.modules.g.value.notify.0.resource');
      // A slack resource (connection) of the author's is not a chat connection of the workspace.
      expect((await s.post(`${ws()}/resources/create`, { path: 'u/admin/own_slack', resource_type: 'slack', value: { bot_token: 'xoxb-own', signing_secret: 'own' } })).status).toBe(201);
      const own = await s.fetch(`${ws()}/flows/create`, json({ path: 'u/admin/own_conn', value: flowWith('u/admin/own_slack') }));
      expect(own.status).toBe(400);
      expect((await own.json()).error.message).toContain('has no chat connection u/admin/own_slack');
      const noChannel = await s.fetch(`${ws()}/flows/create`, json({ path: 'u/admin/no_channel', value: { modules: [{ id: 'g', value: { type: 'consentgate', approvers: ['alice'], notify: [{ channel: 'chat', resource: 'slack' }] } }] } }));
      expect(noChannel.status).toBe(400);
    });
  });
});
