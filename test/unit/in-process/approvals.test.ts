import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessService, json, until, type InProcessService } from './harness.js';

/**
 * Approval rules in-process (spec 2.4-2.6, 3, 4.8, 5.6, 7.4, 7.6): resume URLs count once each,
 * forged ones change nothing, cancel and timeout end the flow (or it goes on with an `error`
 * payload), self-approval, anonymous approval and group rules hold on the endpoint. Timeouts
 * happen by moving the service's clock, not by waiting. test/http/approvals.test.ts runs the same
 * flows over real HTTP in both shells.
 */

let s: InProcessService;
beforeAll(async () => {
  s = await inProcessService();
});

const ws = '/api/w/main';

/** A step that hands out one resume URL per approver and returns them. */
const ASK = `import * as svc from 'svc-client';
export async function main(approvers: string[]) {
  const urls: Record<string, unknown> = {};
  for (const a of approvers) urls[a] = await svc.getResumeUrls(a);
  return { urls, description: { render_all: [{ markdown: '# Refund' }] }, default_args: { reason: 'looks fine' } };
}`;

const AFTER = `export function main(resume: any, approvers: string[], asked: any) { return { resume, approvers, asked: Object.keys(asked?.urls ?? {}) } }`;

const step = (id: string, content: string, input_transforms: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  id,
  value: { type: 'rawscript', language: 'bun', content, input_transforms },
  ...extra,
});
const js = (expr: string) => ({ type: 'javascript', expr });

function approvalFlow(suspend: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    modules: [
      step('ask', ASK, { approvers: js('flow_input.approvers') }, { suspend, ...extra }),
      step('after', AFTER, { resume: js('resume'), approvers: js('approvers'), asked: js('results.ask') }),
    ] as unknown[],
  };
}

const FORM = { schema: { properties: { reason: { type: 'string', description: 'why' }, amount: { type: 'number' } }, required: ['reason'], order: ['reason', 'amount'] } };

type Urls = Record<string, { resume: string; cancel: string; approvalPage: string }>;

async function createFlow(path: string, value: unknown, token?: string) {
  const res = await s.fetch(`${ws}/flows/create`, { ...json({ path, value }), ...(token ? { token } : {}) });
  expect(res.status, await res.clone().text()).toBe(201);
}

/** Runs the flow until it is suspended; returns the job id, the URLs its step handed out and the job. */
async function runUntilSuspended(path: string, args: unknown, token?: string): Promise<{ id: string; urls: Urls; job: Record<string, any> }> {
  const id = await (await s.fetch(`${ws}/jobs/run/p/${path}`, { ...json(args), ...(token ? { token } : {}) })).text();
  const job = await s.job(id);
  if (job.status !== 'suspended') throw new Error(`flow is ${job.status}: ${JSON.stringify(job.result)}`);
  return { id, urls: job.flow_status.results.ask.urls, job };
}

/** A URL as the service built it (on its BASE_INTERNAL_URL), as a path for app.request(). */
const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

/** A user in the workspace with a login session; returns the session cookie. */
async function session(username: string, role: string) {
  await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` });
  await s.post(`${ws}/workspaces/add_user`, { username, role });
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  return (login.headers.get('set-cookie') ?? '').split(';')[0];
}
const withCookie = (cookie: string, body: unknown) => ({ ...json(body), token: null, headers: { cookie, 'content-type': 'application/json' } });

describe('approval steps', () => {
  it('waits for two approvals, counting each URL once, and passes the form values and approvers on', async () => {
    await createFlow('u/admin/refund', approvalFlow({ required_events: 2, timeout: 600, resume_form: FORM }));
    const { id, urls, job } = await runUntilSuspended('u/admin/refund', { approvers: ['alice', 'bob'] });
    expect(job.flow_status.suspend).toMatchObject({ module: 'ask', approvals_received: 0, approvals_required: 2 });
    expect(urls.alice.resume).toMatch(/\/api\/w\/main\/jobs_u\/resume\/[0-9a-f-]{36}\/\d+\/[0-9a-f]{64}\?approver=alice$/);

    const first = await s.fetch(local(urls.alice.resume), { ...json({ reason: 'ok', amount: 5 }), token: null });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ approvals_received: 1, approvals_required: 2 });
    expect((await s.fetch(local(urls.alice.resume), { ...json({ reason: 'again' }), token: null })).status).toBe(409);
    const forged = local(urls.bob.resume).replace(/\/([0-9a-f]{64})/, (_, sig: string) => `/${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`);
    expect((await s.fetch(forged, { ...json({ reason: 'forged' }), token: null })).status).toBe(403);
    expect((await s.fetch(local(urls.bob.resume).replace('approver=bob', 'approver=mallory'), { ...json({}), token: null })).status).toBe(403);
    const still = await s.job(id);
    expect(still.status).toBe('suspended');
    expect(still.flow_status.suspend.approvals_received).toBe(1);

    // A GET counts too (a link in a mail), with its query as the payload.
    expect((await s.fetch(`${local(urls.bob.resume)}&reason=fine&amount=7`, { token: null })).status).toBe(200);
    const done = await s.job(id);
    expect(done.status).toBe('success');
    expect(done.result).toEqual({ resume: { reason: 'fine', amount: '7' }, approvers: ['alice', 'bob'], asked: ['alice', 'bob'] });
  });

  it('cancels the flow from the cancel URL, or goes on with an error payload when the step continues on error', async () => {
    await createFlow('u/admin/cancellable', approvalFlow({ required_events: 1 }));
    const canceled = await runUntilSuspended('u/admin/cancellable', { approvers: ['carol'] });
    expect((await s.fetch(local(canceled.urls.carol.cancel), { ...json({ reason: 'too expensive' }), token: null })).status).toBe(200);
    const job = await s.job(canceled.id);
    expect(job.status).toBe('canceled');
    expect(job.result.error.message).toContain('too expensive');
    expect((await s.fetch(local(canceled.urls.carol.resume), { ...json({}), token: null })).status).toBe(409);

    await createFlow('u/admin/tolerant', approvalFlow({ required_events: 1 }, { continue_on_error: true }));
    const tolerant = await runUntilSuspended('u/admin/tolerant', { approvers: ['carol'] });
    await s.fetch(local(tolerant.urls.carol.cancel), { method: 'GET', token: null });
    const wentOn = await s.job(tolerant.id);
    expect(wentOn.status).toBe('success');
    expect(wentOn.result.resume.error).toMatchObject({ name: 'Canceled' });
    expect(wentOn.result.approvers).toEqual([]);
  });

  it('cancels a flow whose approvals do not arrive in time, and not a moment before', async () => {
    await createFlow('u/admin/hurry', approvalFlow({ required_events: 1, timeout: 60 }));
    const late = await runUntilSuspended('u/admin/hurry', { approvers: ['dan'] });
    // Woken early (a driver may), the flow keeps waiting.
    s.clock.advance(59_000);
    await s.flows.wake('main', late.id);
    expect((await s.job(late.id)).status).toBe('suspended');
    s.clock.advance(2_000);
    await s.flows.wakeDue(s.clock.now());
    const timedOut = await s.job(late.id);
    expect(timedOut.status).toBe('canceled');
    expect(timedOut.result.error).toMatchObject({ name: 'SuspendTimeout', step_id: 'ask' });
    expect((await s.fetch(local(late.urls.dan.resume), { ...json({}), token: null })).status).toBe(409);

    await createFlow('u/admin/hurry_on', approvalFlow({ required_events: 1, timeout: 60 }, { continue_on_error: true }));
    const goesOn = await runUntilSuspended('u/admin/hurry_on', { approvers: ['dan'] });
    s.clock.advance(61_000);
    await s.flows.wakeDue(s.clock.now());
    const done = await s.job(goesOn.id);
    expect(done.status).toBe('success');
    expect(done.result.resume.error.name).toBe('SuspendTimeout');
  });

  it('refuses self-approval and anonymous approval when the step says so, on the resume endpoint', async () => {
    const erin = await session('erin', 'developer');
    const frank = await session('frank', 'developer');
    const erinToken = await (await s.fetch('/api/users/tokens/create', withCookie(erin, { label: 'x' }))).text();
    await createFlow('u/erin/payout', approvalFlow({ required_events: 1, self_approval_disabled: true }), erinToken);
    const { id, urls } = await runUntilSuspended('u/erin/payout', { approvers: ['anyone'] }, erinToken);

    expect((await s.fetch(local(urls.anyone.resume), { ...json({}), token: null })).status).toBe(401);
    const self = await s.fetch(local(urls.anyone.resume), withCookie(erin, {}));
    expect(self.status).toBe(403);
    expect((await self.json()).error.message).toBe('the user who triggered the flow may not approve it');
    expect((await s.job(id)).flow_status.suspend.approvals_received).toBe(0);

    expect((await s.fetch(local(urls.anyone.resume), withCookie(frank, { reason: 'ok' }))).status).toBe(200);
    expect((await s.job(id)).result.approvers).toEqual(['frank']);
  });

  it('serves an approval page per resume URL, refusing a forged one', async () => {
    await createFlow('u/admin/paged', approvalFlow({ required_events: 1, resume_form: FORM }));
    const { urls } = await runUntilSuspended('u/admin/paged', { approvers: ['gina'] });
    const page = await s.fetch(local(urls.gina.approvalPage), { token: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toContain('u/admin/paged');
    expect(html).toContain('<h1>Refund</h1>');
    expect(html).toContain('looks fine');
    const forged = await s.fetch(local(urls.gina.approvalPage).replace(/\/(\d+)\//, (_, n: string) => `/${Number(n) + 1}/`), { token: null });
    expect(forged.status).toBe(403);
  });

  it('counts a pre-approval received earlier in the flow at the next suspend step, once', async () => {
    let release!: () => void;
    (globalThis as Record<string, unknown>).releaseWork = new Promise<void>((r) => (release = r));
    const gate = (id: string) => step(id, 'export function main() { return "gate" }', {}, { suspend: { required_events: 1, timeout: 600 } });
    await createFlow('u/admin/preapproved', {
      modules: [
        step('pre', `import * as svc from 'svc-client';\nexport function main() { return svc.getResumeUrls('early-bird', true) }`),
        step('work', 'export async function main() { await globalThis.releaseWork; return "worked" }'),
        gate('first_gate'),
        step('seen', 'export function main(a: string[]) { return a }', { a: js('approvers') }),
        gate('second_gate'),
      ],
    });
    const id = await (await s.post(`${ws}/jobs/run/p/u/admin/preapproved`, {})).text();
    // While `work` runs, approve through the pre-approval URL `pre` handed out.
    const view = async () => (await (await s.fetch(`${ws}/jobs_u/get/${id}`)).json()) as Record<string, any>;
    const urls = (await until(view, (j) => j.flow_status?.results?.pre !== undefined)).flow_status.results.pre;
    expect(urls.resume).toContain('flow_level=true');
    expect((await s.fetch(local(urls.resume), { ...json({ ok: true }), token: null })).status).toBe(200);
    release();

    // The first gate goes through on it; the second one waits: a pre-approval is used up once.
    const job = await s.job(id);
    expect(job.status).toBe('suspended');
    expect(job.flow_status.suspend.module).toBe('second_gate');
    expect(job.flow_status.results.seen).toEqual(['early-bird']);
    expect((await s.fetch(local(urls.resume), { ...json({}), token: null })).status).toBe(409);
    await s.post(`${ws}/jobs_u/queue/cancel/${id}`, {});
    expect((await s.job(id)).status).toBe('canceled');
  });

  it('lets only members of a group approve, the group coming from another step', async () => {
    const henry = await session('henry', 'operator');
    const ivy = await session('ivy', 'operator');
    await s.post(`${ws}/groups/create`, { name: 'finance' });
    await s.post(`${ws}/groups/adduser/finance`, { username: 'henry' });
    const value = approvalFlow({ required_events: 1, user_groups_required: js('results.pick.groups') });
    value.modules.unshift(step('pick', 'export function main() { return { groups: ["finance"] } }'));
    await createFlow('u/admin/finance_only', value);
    const { id, urls } = await runUntilSuspended('u/admin/finance_only', { approvers: ['x'] });

    const asIvy = await s.fetch(local(urls.x.resume), withCookie(ivy, {}));
    expect(asIvy.status).toBe(403);
    expect((await asIvy.json()).error.message).toBe('only members of finance may approve this step');
    expect((await s.fetch(local(urls.x.resume), { ...json({}), token: null })).status).toBe(401);
    expect((await s.fetch(local(urls.x.resume), withCookie(henry, { reason: 'ok' }))).status).toBe(200);
    expect((await s.job(id)).result.approvers).toEqual(['henry']);
  });

  it('shows a step that returns its resume URL as a prompt the runner may approve themselves (spec 2.6)', async () => {
    const prompt = `import * as svc from 'svc-client';
export async function main() {
  return { ...(await svc.getResumeUrls()), default_args: { size: 'M' }, enums: { size: ['S', 'M', 'L'] }, description: 'Pick a size' };
}`;
    await createFlow('u/admin/prompted', {
      modules: [step('ask', prompt, {}, { suspend: { required_events: 1 } }), step('after', 'export function main(r: any) { return r }', { r: js('resume') })],
    });
    const id = await (await s.post(`${ws}/jobs/run/p/u/admin/prompted`, {})).text();
    const job = await s.job(id);
    expect(job.status).toBe('suspended');
    const shown = job.flow_status.suspend.prompt;
    expect(shown).toMatchObject({ default_args: { size: 'M' }, enums: { size: ['S', 'M', 'L'] }, description: 'Pick a size' });
    expect(shown.resume).toContain('/jobs_u/resume/');
    expect((await s.fetch(local(shown.resume), json({ size: 'L' }))).status).toBe(200);
    expect((await s.job(id)).result).toEqual({ size: 'L' });
  });
});
