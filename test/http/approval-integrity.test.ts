import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpMember, startServer, waitForJob, type Member, type TestServer } from './harness.js';
import { startFakeSlack, type FakeSlack, type SlackMessage } from './fake-slack.js';

/**
 * Approvals that cannot be forged (issue 30), over HTTP against either shell: each attack is
 * replayed as a hostile member or an outside page would try it, and must fail with a clear 4xx and
 * change nothing. A decision counts as a person only with their login session or a personal token
 * that is unscoped and valid for the workspace; a removed member keeps no approval right; a GET
 * from another page decides as nobody signed in.
 */

let s: TestServer;
/** The workspace's Slack app, which the admin connected. */
let slack: FakeSlack;
/** A Slack of mallory's own: a server she controls, which says her Slack user is carol. */
let evil: FakeSlack;
const MALLORY_AS_CAROL = { id: 'U0MALLORY', name: 'carol', email: 'carol@example.com' };
const CAROL = { id: 'U0CAROL', name: 'carol.c', email: 'carol@example.com' };
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

const people: Record<string, Member> = {};
const person = (username: string, role: 'admin' | 'developer' | 'operator') => signUpMember(s, username, role);

beforeAll(async () => {
  slack = await startFakeSlack([CAROL], ['C0FINANCE']);
  evil = await startFakeSlack([MALLORY_AS_CAROL], ['C0EVIL']);
  // Both fakes are on loopback: the instance must allow private addresses (its SSRF guard).
  s = await startServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
  for (const [name, role] of [['carol', 'developer'], ['dave', 'operator'], ['erin', 'operator'], ['mallory', 'developer']] as const) people[name] = await person(name, role);
  expect((await s.post('/api/workspaces/create', { id: 'other', name: 'Other' })).status).toBe(201);
}, 120_000);
afterAll(async () => {
  await s?.stop();
  await slack?.close();
  await evil?.close();
});

const ASK = `import * as svc from 'svc-client';
export async function main() { return await svc.getResumeUrls() }`;

async function suspendedFlow(path: string, suspend: Record<string, unknown>): Promise<{ id: string; urls: { resume: string; cancel: string; approvalPage: string } }> {
  const value = {
    modules: [
      { id: 'ask', value: { type: 'rawscript', language: 'bun', content: ASK, input_transforms: {} }, suspend },
      { id: 'after', value: { type: 'rawscript', language: 'bun', content: 'export function main(a: string[]) { return a }', input_transforms: { a: { type: 'javascript', expr: 'approvers' } } } },
    ],
  };
  const created = await s.fetch(`${ws()}/flows/create`, json({ path, value }));
  expect(created.status, await created.clone().text()).toBe(201);
  const id = await (await s.fetch(`${ws()}/jobs/run/p/${path}`, json({}))).text();
  for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 50))) {
    const job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    if (job.status === 'suspended') return { id, urls: job.flow_status.results.ask };
    if (['success', 'failed', 'canceled'].includes(job.status)) throw new Error(`flow ended as ${job.status}: ${JSON.stringify(job.result)}`);
    if (Date.now() > deadline) throw new Error(`flow still ${job.status}`);
  }
}

async function approvalsOf(id: string): Promise<{ status: string; received: number }> {
  const job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
  return { status: job.status, received: job.flow_status?.suspend?.approvals_received ?? -1 };
}

const post = (url: string, token: string) => s.fetch(local(url), { ...json({}), token });

describe('one identity rule for every approval channel', () => {
  it("refuses a job's token (OV_TOKEN) on a resume URL: a script another member runs cannot approve as them", async () => {
    const { id, urls } = await suspendedFlow('u/admin/needs_login', { required_events: 1, user_auth_required: true });
    // The attack: a script POSTs the resume URL with the job token of whoever runs it (carol).
    // It reaches the API the way a job does, through BASE_INTERNAL_URL (inside the job network boundary
    // the URL's own address is the host's loopback, which a job cannot reach).
    const script = `export async function main(url: string) {
  const u = new URL(url);
  const r = await fetch(process.env.BASE_INTERNAL_URL + u.pathname + u.search, { method: 'POST', headers: { authorization: 'Bearer ' + process.env.OV_TOKEN, 'content-type': 'application/json' }, body: '{}' });
  return { status: r.status, body: await r.text() };
}`;
    expect((await s.fetch(`${ws()}/scripts/create`, { ...json({ path: 'u/carol/helper', language: 'bun', content: script }), token: people.carol.token })).status).toBe(201);
    const ran = await s.fetch(`${ws()}/jobs/run_wait_result/p/u/carol/helper`, { ...json({ url: urls.resume }), token: people.carol.token });
    expect(ran.status).toBe(200);
    const answer = await ran.json();
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).error.message).toMatch(/job token/);
    expect(await approvalsOf(id)).toEqual({ status: 'suspended', received: 0 });
  });

  it('refuses a scoped token and a token limited to another workspace, with why; a personal token counts', async () => {
    const { id, urls } = await suspendedFlow('u/admin/token_kinds', { required_events: 1, user_auth_required: true });
    const scoped = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'scoped', scopes: ['jobs:run:u/dave/*'] }), token: people.dave.token })).text();
    const byScoped = await post(urls.resume, scoped);
    expect(byScoped.status).toBe(403);
    expect((await byScoped.json()).error.message).toMatch(/scopes/);
    const elsewhere = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'other ws', workspace_id: 'other' }), token: people.dave.token })).text();
    const byElsewhere = await post(urls.resume, elsewhere);
    expect(byElsewhere.status).toBe(403);
    expect((await byElsewhere.json()).error.message).toMatch(/workspace other/);
    // The cancel URL follows the same rule.
    expect((await post(urls.cancel, scoped)).status).toBe(403);
    expect(await approvalsOf(id)).toEqual({ status: 'suspended', received: 0 });

    expect((await post(urls.resume, people.dave.token)).status).toBe(200);
    expect((await waitForJob(s, id)).result).toEqual(['dave']);
  });

  it('refuses a job token even where anonymous approvals count: it would be recorded as a person', async () => {
    const { id, urls } = await suspendedFlow('u/admin/open_step', { required_events: 1 });
    const scoped = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'scoped2', scopes: ['jobs:read'] }), token: people.erin.token })).text();
    expect((await post(urls.resume, scoped)).status).toBe(403);
    expect(await approvalsOf(id)).toEqual({ status: 'suspended', received: 0 });
  });

  it('refuses a scoped token on the consent endpoint, with the same rule', async () => {
    const value = { modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['erin'] } }] };
    expect((await s.fetch(`${ws()}/flows/create`, json({ path: 'u/admin/gated', value }))).status).toBe(201);
    const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/gated`, json({}))).text();
    for (const deadline = Date.now() + 30_000; (await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).status !== 'awaiting_approval'; await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > deadline) throw new Error('no gate');
    }
    const elsewhere = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'other ws 2', workspace_id: 'other' }), token: people.erin.token })).text();
    const refused = await s.fetch(`/api/v1/runs/${id}/consent`, { ...json({ decision: 'approved' }), token: elsewhere });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.message).toMatch(/workspace other/);
    expect((await s.fetch(`/api/v1/runs/${id}/consent`, { ...json({ decision: 'approved' }), token: people.erin.token })).status).toBe(200);
  });
});

describe('removing a member', () => {
  it('removes them from the workspace groups and ends their approval rights', async () => {
    const frank = await person('frank', 'operator');
    expect((await s.post(`${ws()}/groups/create`, { name: 'treasury' })).status).toBeLessThan(300);
    expect((await s.post(`${ws()}/groups/adduser/treasury`, { username: 'frank' })).status).toBeLessThan(300);
    const { id, urls } = await suspendedFlow('u/admin/treasury_step', { required_events: 1, user_groups_required: 'treasury' });
    const gate = { modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['group:treasury'] } }] };
    expect((await s.fetch(`${ws()}/flows/create`, json({ path: 'u/admin/treasury_gate', value: gate }))).status).toBe(201);
    const gated = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/treasury_gate`, json({}))).text();

    expect((await s.post(`${ws()}/workspaces/remove_user`, { username: 'frank' })).status).toBe(200);
    const group = await (await s.fetch(`${ws()}/groups/get/treasury`)).json();
    expect(group.members ?? []).not.toContain('frank');

    const step = await s.fetch(local(urls.resume), { ...json({}), token: null, headers: { cookie: frank.cookie, 'content-type': 'application/json' } });
    expect(step.status).toBe(403);
    expect(await approvalsOf(id)).toEqual({ status: 'suspended', received: 0 });
    for (const deadline = Date.now() + 30_000; (await (await s.fetch(`${ws()}/jobs_u/get/${gated}`)).json()).status !== 'awaiting_approval'; await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > deadline) throw new Error('no gate');
    }
    const consent = await s.fetch(`/api/v1/runs/${gated}/consent`, { ...json({ decision: 'approved' }), token: frank.token });
    expect([403, 404]).toContain(consent.status);
    expect((await (await s.fetch(`${ws()}/jobs_u/get/${gated}`)).json()).status).toBe('awaiting_approval');

    // Added back, they are in no group until an admin puts them there again.
    expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'frank', role: 'operator' })).status).toBe(201);
    expect((await (await s.fetch(`${ws()}/groups/get/treasury`)).json()).members ?? []).not.toContain('frank');
    const again = await s.fetch(local(urls.resume), { ...json({}), token: null, headers: { cookie: frank.cookie, 'content-type': 'application/json' } });
    expect(again.status).toBe(403);
  });
});

describe('no state change on a cross-site GET', () => {
  /** What a page on another port of the same host makes the browser send: the SameSite=Strict cookie comes along. */
  const sameSiteGet = (url: string, cookie: string, accept = '*/*') =>
    s.fetch(local(url), { token: null, redirect: 'manual', headers: { cookie, 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors', accept } });

  it('does not approve or cancel as the signed-in user on a GET; the approval page confirms with a POST', async () => {
    const { id, urls } = await suspendedFlow('u/admin/get_login', { required_events: 1, user_auth_required: true });
    const approve = await sameSiteGet(urls.resume, people.dave.cookie);
    expect(approve.status).toBe(403);
    expect((await approve.json()).error.message).toMatch(/approval page/);
    expect((await sameSiteGet(urls.cancel, people.dave.cookie)).status).toBe(403);
    expect(await approvalsOf(id)).toEqual({ status: 'suspended', received: 0 });
    // A person following the link in a browser is taken to the approval page, which decides with a POST.
    const navigated = await sameSiteGet(urls.resume, people.dave.cookie, 'text/html');
    expect(navigated.status).toBe(303);
    expect(navigated.headers.get('location')).toBe(local(urls.approvalPage));
    expect(await approvalsOf(id)).toEqual({ status: 'suspended', received: 0 });
    // The page's own POST (same origin) decides as dave.
    const confirmed = await s.fetch(local(urls.resume), { ...json({}), token: null, headers: { cookie: people.dave.cookie, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' } });
    expect(confirmed.status).toBe(200);
    expect((await waitForJob(s, id)).result).toEqual(['dave']);
  });

  it('counts a GET as an anonymous decision where the step allows one (a mail link), never as the cookie holder', async () => {
    const { id, urls } = await suspendedFlow('u/admin/get_open', { required_events: 1 });
    const approve = await sameSiteGet(urls.resume, people.dave.cookie);
    expect(approve.status).toBe(200);
    expect((await waitForJob(s, id)).result).toEqual(['anonymous']);
  });
});

describe('chat approvals cannot be forged', () => {
  const deliver = (payload: unknown, by: FakeSlack, opts?: { secret?: string }) => {
    const { body, headers } = by.interaction(payload, opts);
    return s.fetch(`${ws()}/chat/slack/interactions`, { method: 'POST', headers, body, token: null });
  };
  const jobStatus = async (id: string) => (await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).status;
  async function untilStatus(id: string, wanted: string): Promise<void> {
    for (const deadline = Date.now() + 30_000; (await jobStatus(id)) !== wanted; await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > deadline) throw new Error(`run ${await jobStatus(id)}, not ${wanted}`);
    }
  }

  it("refuses a flow author's own Slack connection: a callback she signs is never recorded as another member", async () => {
    const mallory = people.mallory.token;
    // The attack as written: a slack connection pointing at her own server, a gate only carol may decide.
    const value = { bot_token: evil.token, signing_secret: evil.signingSecret, api_url: evil.apiUrl };
    expect((await s.fetch(`${ws()}/resources/create`, { ...json({ path: 'u/mallory/slack', resource_type: 'slack', value }), token: mallory })).status).toBe(201);
    const gate = { modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['carol'], message: 'Pay mallory?', notify: [{ channel: 'chat', resource: 'u/mallory/slack', channel_id: 'C0EVIL' }] } }] };
    const created = await s.fetch(`${ws()}/flows/create`, { ...json({ path: 'u/mallory/pay_me', value: gate }), token: mallory });
    expect(created.status).toBe(400);
    expect((await created.json()).error.message).toContain('has no chat connection u/mallory/slack');

    // The same from an approval step: requestInteractiveChatApproval naming her connection is refused, nothing is posted.
    const ask = `import * as svc from 'svc-client';
export async function main() { return await svc.requestInteractiveChatApproval({ chatResourcePath: 'u/mallory/slack', channelId: 'C0EVIL', message: 'ok?' }) }`;
    const step = { modules: [{ id: 'ask', value: { type: 'rawscript', language: 'bun', content: ask, input_transforms: {} }, suspend: { required_events: 1, user_groups_required: 'all' } }] };
    expect((await s.fetch(`${ws()}/flows/create`, { ...json({ path: 'u/mallory/step_me', value: step }), token: mallory })).status).toBe(201);
    const run = await (await s.fetch(`${ws()}/jobs/run/p/u/mallory/step_me`, { ...json({}), token: mallory })).text();
    const ended = await waitForJob(s, run, 30_000);
    expect(ended.status).toBe('failed');
    expect(JSON.stringify(ended.result)).toContain('has no chat connection u/mallory/slack');
    expect(evil.messages).toHaveLength(0);

    // Nor may she connect a chat platform herself: that is a workspace admin's setting.
    const own = await s.fetch(`${ws()}/workspaces/chat_connections/mine`, { ...json({ platform: 'slack', bot_token: evil.token, signing_secret: evil.signingSecret, api_url: evil.apiUrl }), token: mallory });
    expect(own.status).toBe(403);
  });

  it("refuses a callback signed with anything but the admin-connected app's secret, on a real gate, and changes nothing", async () => {
    expect((await s.post(`${ws()}/workspaces/chat_connections/slack`, { platform: 'slack', bot_token: slack.token, signing_secret: slack.signingSecret, api_url: slack.apiUrl })).status).toBe(200);
    // A script an admin runs may not re-point it either: connecting is a person's act, not a job's.
    const repoint = `export async function main(url: string) {
  const r = await fetch(process.env.BASE_INTERNAL_URL + '/api/w/' + process.env.OV_WORKSPACE + '/workspaces/chat_connections/slack', {
    method: 'POST', headers: { authorization: 'Bearer ' + process.env.OV_TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ platform: 'slack', bot_token: 'xoxb-evil', signing_secret: 'evil', api_url: url }) });
  return r.status;
}`;
    expect((await s.post(`${ws()}/scripts/create`, { path: 'u/admin/repoint', language: 'bun', content: repoint })).status).toBe(201);
    const repointed = await s.fetch(`${ws()}/jobs/run_wait_result/p/u/admin/repoint`, json({ url: evil.apiUrl }));
    expect(await repointed.json()).toBe(403);
    const listed = await (await s.fetch(`${ws()}/workspaces/chat_connections`, { token: people.mallory.token })).json();
    expect(listed).toEqual([expect.objectContaining({ name: 'slack', platform: 'slack', api_url: slack.apiUrl })]);
    expect(JSON.stringify(listed)).not.toContain(slack.signingSecret);
    expect(JSON.stringify(listed)).not.toContain(slack.token);

    const gate = { modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['carol'], message: 'Pay ACME?', notify: [{ channel: 'chat', resource: 'slack', channel_id: 'C0FINANCE' }] } }] };
    expect((await s.fetch(`${ws()}/flows/create`, json({ path: 'u/admin/pay_acme', value: gate }))).status).toBe(201);
    const before = slack.messages.length;
    const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/pay_acme`, json({}))).text();
    await untilStatus(id, 'awaiting_approval');
    for (const deadline = Date.now() + 30_000; slack.messages.length === before; await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > deadline) throw new Error('no gate message');
    }
    const message: SlackMessage = slack.messages[before];

    // Mallory saw the message (she is in the channel): she signs carol's click with her own secret.
    const forged = slack.click(message, 'svc_approve', MALLORY_AS_CAROL);
    const refused = await deliver(forged, evil);
    expect(refused.status).toBe(401);
    expect(await jobStatus(id)).toBe('awaiting_approval');
    // Her own Slack user, with the workspace's signature, is still not carol: Slack's own users.info says who she is.
    expect((await deliver(slack.click(message, 'svc_approve', MALLORY_AS_CAROL), slack)).status).toBe(403);
    expect(await jobStatus(id)).toBe('awaiting_approval');

    // Who asks is checked before what they name: an unsigned click on an unknown run answers as on the real one.
    const unknown = { ...forged, actions: [{ ...(forged.actions as any[])[0], value: '00000000-0000-0000-0000-000000000000.aaaaaaaaaaaaaaaa' }] };
    const onReal = await deliver(forged, evil, { secret: 'not-the-secret' });
    const onUnknown = await deliver(unknown, evil, { secret: 'not-the-secret' });
    expect([onReal.status, onUnknown.status]).toEqual([401, 401]);
    expect(await onUnknown.json()).toEqual(await onReal.json());

    // Carol herself, through the admin's app: decided, and recorded as carol.
    expect((await deliver(slack.click(message, 'svc_approve', CAROL), slack)).status).toBe(200);
    const done = await waitForJob(s, id, 30_000);
    expect(done.status).toBe('success');
  });
});
