import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpMember, startServer, waitForJob, type TestServer } from './harness.js';
import { startFakeTeams, type FakeTeams, type TeamsActivity, type TeamsUser } from './fake-teams.js';

/**
 * Chat approvals in Microsoft Teams (README: Chat approvals), over HTTP against either shell and a
 * fake Bot Framework on loopback: requestInteractiveCollabApproval posts an Adaptive Card with the
 * step's form to a channel found by team and channel name; the card's invoke is accepted only with
 * a valid Bot Framework JWT; a non-approver is refused; the approver's invoke resumes the flow with
 * the card's values, and the answer replaces the card with the outcome.
 */

let s: TestServer;
let teams: FakeTeams;
const ALICE: TeamsUser = { id: '29:alice', name: 'Alice A.', email: 'alice@example.com' };
const BOB: TeamsUser = { id: '29:bob', name: 'Bob B.', email: 'bob@example.com' };
const APPROVALS = { id: '19:approvals@thread.tacv2', name: 'approvals' };

const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

beforeAll(async () => {
  teams = await startFakeTeams([ALICE, BOB], [{ id: '19:general@thread.tacv2', name: null }, APPROVALS]);
  s = await startServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
  for (const name of ['alice', 'bob']) {
    expect((await s.post('/api/users/create', { username: name, email: `${name}@example.com`, password: `${name}-password-1` })).status).toBe(201);
    expect((await s.post(`${ws()}/workspaces/add_user`, { username: name, role: 'operator' })).status).toBe(201);
  }
  // The workspace admin connects the bot in the workspace settings; flows name the team (or the connection).
  const value = {
    platform: 'teams',
    app_id: teams.appId,
    app_password: teams.appPassword,
    team_id: teams.teamId,
    team_name: 'Finance',
    service_url: teams.serviceUrl,
    token_url: teams.tokenUrl,
    openid_metadata_url: teams.openidMetadataUrl,
  };
  expect((await s.post(`${ws()}/workspaces/chat_connections/finance-teams`, value)).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await teams?.close();
});

const ASK = `import * as svc from 'svc-client';
export async function main(channel: string) {
  return await svc.requestInteractiveCollabApproval({
    teamName: 'finance', channelName: channel, message: 'Refund 40 EUR for order 7?', approver: 'alice',
    defaultArgsJson: { reason: 'damaged' }, dynamicEnumsJson: { currency: ['EUR', 'CHF'] },
  });
}`;

const ASK_PY = `import svc
def main(channel: str):
    return svc.request_interactive_collab_approval("Finance", channel, "Refund 40 EUR for order 8?")
`;

const FORM = { schema: { properties: { reason: { type: 'string' }, amount: { type: 'number' }, currency: { type: 'string' } }, required: ['reason'], order: ['reason', 'amount', 'currency'] } };

async function runUntilSuspended(path: string, channel: string, python = false): Promise<{ id: string; job: any }> {
  const value = {
    modules: [
      { id: 'ask', value: { type: 'rawscript', language: python ? 'python3' : 'bun', content: python ? ASK_PY : ASK, input_transforms: { channel: { type: 'javascript', expr: 'flow_input.channel' } } }, suspend: { required_events: 1, resume_form: FORM } },
      { id: 'after', value: { type: 'rawscript', language: 'bun', content: 'export function main(r: any, a: string[]) { return { resume: r, approvers: a } }', input_transforms: { r: { type: 'javascript', expr: 'resume' }, a: { type: 'javascript', expr: 'approvers' } } } },
    ],
  };
  expect((await s.fetch(`${ws()}/flows/create`, json({ path, value }))).status).toBe(201);
  const id = await (await s.fetch(`${ws()}/jobs/run/p/${path}`, json({ channel }))).text();
  const deadline = Date.now() + 30_000;
  for (;;) {
    const job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    if (job.status === 'suspended') return { id, job };
    if (['success', 'failed', 'canceled'].includes(job.status)) throw new Error(`flow ended as ${job.status}: ${JSON.stringify(job.result)}`);
    if (Date.now() > deadline) throw new Error(`flow still ${job.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function send(activity: unknown, token: string | null): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return s.fetch(`${ws()}/chat/teams/messages`, { method: 'POST', headers, body: JSON.stringify(activity), token: null });
}

const status = async (id: string) => (await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).status;
const card = (a: TeamsActivity) => a.activity.attachments[0].content;

describe('Teams chat approvals', () => {
  it('posts a card with the form to the channel named, refuses bad tokens and non-approvers, and resumes with the card values', async () => {
    const before = teams.activities.length;
    const { id, job } = await runUntilSuspended('u/admin/refund_teams', 'Approvals');
    expect(job.flow_status.results.ask).toMatchObject({ channel: APPROVALS.id, posted: true });
    const posted = teams.activities[before];
    expect(posted.conversation).toBe(APPROVALS.id);
    const inputs = card(posted).body.filter((e: any) => e.type.startsWith('Input.'));
    expect(inputs.map((e: any) => [e.type, e.id])).toEqual([['Input.Text', 'reason'], ['Input.Number', 'amount'], ['Input.ChoiceSet', 'currency']]);
    expect(inputs[0]).toMatchObject({ value: 'damaged', isRequired: true });
    expect(inputs[2].choices.map((c: any) => c.value)).toEqual(['EUR', 'CHF']);
    expect(card(posted).actions.map((a: any) => [a.type, a.title])).toEqual([['Action.Execute', 'Approve'], ['Action.Execute', 'Reject']]);
    expect(JSON.stringify(job)).not.toContain(teams.appPassword);

    const approve = teams.invoke(posted, 'svc_approve', ALICE, { reason: 'damaged in transit', amount: '40', currency: 'CHF' });
    // Tokens the Bot Framework did not sign for this bot: none, another key, another audience, expired.
    expect((await send(approve, null)).status).toBe(401);
    expect((await send(approve, await teams.sign({}, { key: await teams.otherKey() }))).status).toBe(401);
    expect((await send(approve, await teams.sign({ aud: 'some-other-bot' }))).status).toBe(401);
    expect((await send(approve, await teams.sign({}, { expiresIn: '-10m' }))).status).toBe(401);
    expect((await send(approve, await teams.sign({ serviceurl: 'https://elsewhere.example/' }))).status).toBe(401);
    // Malformed or not ours.
    // (Who asks comes first: an activity the token does not fit, e.g. without its serviceUrl, is 401.)
    expect((await send({ type: 'message', text: 'hi' }, await teams.sign())).status).toBe(401);
    expect((await send({ type: 'message', text: 'hi', serviceUrl: (approve as any).serviceUrl }, await teams.sign())).status).toBe(400);
    expect((await send({ ...approve, value: { action: { verb: 'svc_approve', data: {} } } }, await teams.sign())).status).toBe(400);
    // A bad token gets the same answer whether or not the card it names exists.
    const unknownCard = structuredClone(approve) as any;
    unknownCard.value.action.data = { ...unknownCard.value.action.data, svc_ref: '00000000-0000-0000-0000-000000000000.aaaaaaaaaaaaaaaa' };
    const badToken = await teams.sign({}, { key: await teams.otherKey() });
    const [onReal, onUnknown] = [await send(approve, badToken), await send(unknownCard, badToken)];
    expect([onReal.status, onUnknown.status]).toEqual([401, 401]);
    expect(await onUnknown.json()).toEqual(await onReal.json());
    // Bob is not the approver.
    const byBob = await send(teams.invoke(posted, 'svc_approve', BOB), await teams.sign());
    expect(byBob.status).toBe(403);
    // Teams shows a Universal Actions error to the one who clicked: Bob reads why.
    const refusal = await byBob.json();
    expect(refusal).toMatchObject({ statusCode: 403, type: 'application/vnd.microsoft.error', value: { code: 'not_an_approver' } });
    expect(refusal.value.message).toMatch(/alice/);
    expect(await status(id)).toBe('suspended');

    const ok = await send(approve, await teams.sign());
    expect(ok.status).toBe(200);
    const answer = await ok.json();
    expect(answer).toMatchObject({ statusCode: 200, type: 'application/vnd.microsoft.card.adaptive' });
    expect(JSON.stringify(answer.value)).toMatch(/Approved by alice \(Alice A\.\)/);
    expect(answer.value.actions).toBeUndefined();
    const done = await waitForJob(s, id, 30_000);
    expect(done.result).toEqual({ resume: { reason: 'damaged in transit', amount: 40, currency: 'CHF' }, approvers: ['alice'] });
    const again = await send(approve, await teams.sign());
    expect(again.status).toBe(409);
    expect((await again.json()).value.message).toMatch(/already decided: approved by alice/);
  });

  it('reads the signing keys once, not per callback, and again when Teams signs with a new key', async () => {
    const { id } = await runUntilSuspended('u/admin/refund_teams_keys', 'Approvals');
    const posted = teams.activities.at(-1)!;
    const byBob = teams.invoke(posted, 'svc_approve', BOB);
    await send(byBob, await teams.sign());
    const reads = teams.keyReads();
    for (let i = 0; i < 4; i++) expect((await send(byBob, await teams.sign())).status).toBe(403);
    expect(teams.keyReads()).toBe(reads);
    // A rotation: the old key set has no key for the new kid, so the keys are read once more.
    await new Promise((r) => setTimeout(r, 1_100)); // past the refetch floor that stops forged kids from forcing a read per call
    await teams.rotateKey();
    expect((await send(byBob, await teams.sign())).status).toBe(403);
    expect(teams.keyReads()).toBe(reads + 1);
    expect((await send(teams.invoke(posted, 'svc_approve', ALICE, { reason: 'ok' }), await teams.sign())).status).toBe(200);
    expect((await waitForJob(s, id, 30_000)).status).toBe('success');
  });

  it('refuses a form prefill too large for a chat message, in Teams as in Slack, and posts nothing', async () => {
    const { id, job } = await runUntilSuspended('u/admin/big_prefill', 'Approvals');
    const stepJob = job.flow_status.suspend.step_job;
    const before = teams.activities.length;
    const big = { reason: 'x'.repeat(17 * 1024) };
    const teamsAsk = await s.fetch(`${ws()}/chat/teams/request_approval/${stepJob}`, json({ team_name: 'Finance', channel_name: 'approvals', message: 'hi', default_args_json: big }));
    expect(teamsAsk.status).toBe(400);
    expect(JSON.stringify(await teamsAsk.json())).toContain('default_args_json');
    const slackAsk = await s.fetch(`${ws()}/chat/slack/request_approval/${stepJob}`, json({ chat_resource_path: 'finance-teams', channel_id: 'C0X', message: 'hi', default_args_json: big }));
    expect(slackAsk.status).toBe(400);
    expect(JSON.stringify(await slackAsk.json())).toContain('default_args_json');
    expect(teams.activities.length).toBe(before);
    await s.fetch(`${ws()}/jobs_u/queue/cancel/${id}`, json({ reason: 'done here' }));
  });

  it('says so when the channel is unknown, and the resume URLs still decide (from Python)', async () => {
    const { id, job } = await runUntilSuspended('u/admin/nowhere_teams', 'no-such-channel', true);
    const asked = job.flow_status.results.ask;
    expect(asked).toMatchObject({ posted: false, ts: null });
    expect(asked.error).toContain('has no channel no-such-channel');
    expect((await s.fetch(asked.resume.replace(/^https?:\/\/[^/]+/, ''), { ...json({ reason: 'fine' }), token: null })).status).toBe(200);
    expect((await waitForJob(s, id, 30_000)).status).toBe('success');
  });

  it('rejects a ConsentGate from its Teams card with the reason typed in it, and the run fails with it', async () => {
    const value = {
      modules: [
        { id: 'gate', value: { type: 'consentgate', approvers: ['alice'], message: 'Wire {{ context.amount }} EUR?', notify: [{ channel: 'chat', resource: 'finance-teams', channel_id: 'approvals' }] } },
        { id: 'pay', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return "paid" }', input_transforms: {} } },
      ],
    };
    expect((await s.fetch(`${ws()}/flows/create`, json({ path: 'u/admin/wire', value }))).status).toBe(201);
    const before = teams.activities.length;
    const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/wire`, json({ amount: 900 }))).text();
    const deadline = Date.now() + 30_000;
    while (teams.activities.length === before || (await status(id)) !== 'awaiting_approval') {
      if (Date.now() > deadline) throw new Error(`no gate card; run ${await status(id)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const posted = teams.activities[before];
    expect(posted.conversation).toBe(APPROVALS.id);
    expect(card(posted).body[0].text).toBe('Wire 900 EUR?');
    expect((await send(teams.invoke(posted, 'svc_reject', BOB, { svc_reason: 'no' }), await teams.sign())).status).toBe(403);
    expect((await send(teams.invoke(posted, 'svc_reject', ALICE, { svc_reason: ' ' }), await teams.sign())).status).toBe(400);
    expect((await send(teams.invoke(posted, 'svc_reject', ALICE, { svc_reason: 'wrong IBAN' }), await teams.sign({}, { key: await teams.otherKey() }))).status).toBe(401);
    expect(await status(id)).toBe('awaiting_approval');
    const ok = await send(teams.invoke(posted, 'svc_reject', ALICE, { svc_reason: 'wrong IBAN' }), await teams.sign());
    expect(ok.status).toBe(200);
    expect(JSON.stringify((await ok.json()).value)).toMatch(/Rejected by alice \(Alice A\.\) at .*: wrong IBAN/);
    const done = await waitForJob(s, id, 30_000);
    expect(done.status).toBe('failed');
    expect(done.result).toMatchObject({ decision: 'rejected', approver: 'alice', reason: 'wrong IBAN' });
  });

  it('refuses a member who only reads the step, and posts nothing', async () => {
    const viewer = await signUpMember(s, 'viewer', 'operator');
    expect((await s.post(`${ws()}/folders/create`, { name: 'teamops', extra_perms: { 'u/viewer': false } })).status).toBe(201);
    const { id, job } = await runUntilSuspended('f/teamops/refund', 'Approvals');
    const stepJob = job.flow_status.suspend.step_job;
    expect((await s.fetch(`${ws()}/jobs_u/get/${stepJob}`, { token: viewer.token })).status).toBe(200);
    const before = teams.activities.length;
    const asks = [
      ['request_approval', { team_name: 'Finance', channel_name: 'approvals', message: 'Approve the payout to IBAN DE00 1234?' }],
      ['send_message', { conversation_id: APPROVALS.id, text: 'Approve the payout to IBAN DE00 1234?' }],
    ] as const;
    for (const [route, body] of asks) {
      const refused = await s.fetch(`${ws()}/chat/teams/${route}/${stepJob}`, { ...json(body), token: viewer.token });
      expect(refused.status).toBe(403);
      expect((await refused.json()).error.message).toContain('only the approval step itself');
    }
    expect(teams.activities.length).toBe(before);
    await s.fetch(`${ws()}/jobs_u/queue/cancel/${id}`, json({ reason: 'done here' }));
  });

  it("refuses a basic card carrying the service's own Approve / Reject, which would decide another approval; the message is recorded on the run", async () => {
    const { id, job } = await runUntilSuspended('u/admin/forged_card', 'Approvals');
    const stepJob = job.flow_status.suspend.step_job;
    // The reference of the step's real card, which a forged card would point its button at.
    const ref = card(teams.activities.at(-1)!).actions[0].data.svc_ref;
    const before = teams.activities.length;
    const forged = [
      { type: 'AdaptiveCard', version: '1.4', body: [{ type: 'TextBlock', text: 'Lunch order: fine?' }], actions: [{ type: 'Action.Execute', title: 'Yes', verb: 'svc_approve', data: { svc_ref: ref } }] },
      { type: 'AdaptiveCard', version: '1.4', body: [{ type: 'ActionSet', actions: [{ type: 'Action.Execute', title: 'Yes', verb: 'lunch', data: { svc_ref: ref } }] }] },
    ];
    for (const card_block of forged) {
      const sent = await s.fetch(`${ws()}/chat/teams/send_message/${stepJob}`, json({ conversation_id: APPROVALS.id, text: 'Lunch?', card_block }));
      expect(sent.status).toBe(400);
      expect((await sent.json()).error.message).toContain("may not carry the service's own approval actions");
    }
    expect(teams.activities.length).toBe(before);
    const plain = await s.fetch(`${ws()}/chat/teams/send_message/${stepJob}`, json({ conversation_id: APPROVALS.id, text: 'Please review order 10' }));
    expect(plain.status).toBe(200);
    expect(teams.activities.length).toBe(before + 1);
    const chat = (await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).flow_status.chat;
    expect(chat.at(-1)).toMatchObject({ platform: 'teams', channel: APPROVALS.id, ts: teams.activities.at(-1)!.id, deliveries: [{ method: 'activities.post', ok: true }] });
    await s.fetch(`${ws()}/jobs_u/queue/cancel/${id}`, json({ reason: 'done here' }));
  });

  it('posts the basic variant: a text and the given card with a link to the approval page, which decides', async () => {
    const content = `import * as svc from 'svc-client';
export async function main() {
  return await svc.sendMessageToConversation({ conversationId: '${APPROVALS.id}', text: 'Please review order 9',
    cardBlock: { type: 'AdaptiveCard', version: '1.4', body: [{ type: 'TextBlock', text: 'Order 9: 3 items' }] } });
}`;
    const value = { modules: [{ id: 'ask', value: { type: 'rawscript', language: 'bun', content, input_transforms: {} }, suspend: { required_events: 1 } }] };
    expect((await s.fetch(`${ws()}/flows/create`, json({ path: 'u/admin/basic_teams', value }))).status).toBe(201);
    const before = teams.activities.length;
    const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/basic_teams`, json({}))).text();
    const deadline = Date.now() + 30_000;
    while ((await status(id)) !== 'suspended') {
      if (Date.now() > deadline) throw new Error(`run ${await status(id)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const sent = (await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).flow_status.results.ask;
    expect(sent).toMatchObject({ posted: true });
    const posted = teams.activities[before];
    expect(posted.activity.text).toBe('Please review order 9');
    const open = card(posted).actions.find((a: any) => a.type === 'Action.OpenUrl');
    expect(card(posted).body[0].text).toBe('Order 9: 3 items');
    expect(open.url).toBe(sent.approvalPage);
    const page = await s.fetch(open.url.replace(/^https?:\/\/[^/]+/, ''), { token: null });
    expect(page.status).toBe(200);
    expect((await s.fetch(sent.resume.replace(/^https?:\/\/[^/]+/, ''), { ...json({}), token: null })).status).toBe(200);
    expect((await waitForJob(s, id, 30_000)).status).toBe('success');
  });
});
