import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Approval steps over real HTTP (spec 2.4-2.6, 3, 4.8, 5.6, 7.4, 7.6): a step asks for approvals
 * through getResumeUrls, the flow suspends, resume URLs count once each, cancel and timeout end it
 * (or it goes on with an `error` payload), and the approval options are enforced on the endpoint.
 */

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.stop());

const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** A step that hands out one resume URL per approver and returns them. */
const ASK = `import * as svc from 'svc-client';
export async function main(approvers: string[]) {
  const urls: Record<string, unknown> = {};
  for (const a of approvers) urls[a] = await svc.getResumeUrls(a);
  return { urls, description: { render_all: [{ markdown: '# Refund' }] }, default_args: { reason: 'looks fine' } };
}`;

const AFTER = `export function main(resume: any, approvers: string[], asked: any) { return { resume, approvers, asked: Object.keys(asked?.urls ?? {}) } }`;

function approvalFlow(suspend: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    modules: [
      { id: 'ask', value: { type: 'rawscript', language: 'bun', content: ASK, input_transforms: { approvers: { type: 'javascript', expr: 'flow_input.approvers' } } }, suspend, ...extra },
      {
        id: 'after',
        value: {
          type: 'rawscript',
          language: 'bun',
          content: AFTER,
          input_transforms: { resume: { type: 'javascript', expr: 'resume' }, approvers: { type: 'javascript', expr: 'approvers' }, asked: { type: 'javascript', expr: 'results.ask' } },
        },
      },
    ],
  };
}

const FORM = { schema: { properties: { reason: { type: 'string', description: 'why' }, amount: { type: 'number' } }, required: ['reason'], order: ['reason', 'amount'] } };

async function createFlow(path: string, value: unknown, token?: string) {
  const res = await s.fetch(`${ws()}/flows/create`, { ...json({ path, value }), ...(token ? { token } : {}) });
  expect(res.status, await res.clone().text()).toBe(201);
}

/** Runs the flow and waits until it is suspended; returns the job id and the step's result. */
async function runUntilSuspended(path: string, args: unknown, token?: string): Promise<{ id: string; urls: Record<string, { resume: string; cancel: string; approvalPage: string }>; job: any }> {
  const id = await (await s.fetch(`${ws()}/jobs/run/p/${path}`, { ...json(args), ...(token ? { token } : {}) })).text();
  const deadline = Date.now() + 20_000;
  for (;;) {
    const job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    if (job.status === 'suspended') return { id, urls: job.flow_status.results.ask.urls, job };
    if (['success', 'failed', 'canceled'].includes(job.status)) throw new Error(`flow ended as ${job.status}: ${JSON.stringify(job.result)}`);
    if (Date.now() > deadline) throw new Error(`flow still ${job.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A resume URL as the service built it, requested against the test server. */
const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

describe('approval steps', () => {
  it('waits for two approvals, counting each URL once, and passes the form values and approvers on', async () => {
    await createFlow('u/admin/refund', approvalFlow({ required_events: 2, timeout: 600, resume_form: FORM }));
    const { id, urls, job } = await runUntilSuspended('u/admin/refund', { approvers: ['alice', 'bob'] });
    expect(job.flow_status.suspend).toMatchObject({ module: 'ask', approvals_received: 0, approvals_required: 2 });
    expect(urls.alice.resume).toMatch(new RegExp(`/api/w/${s.workspace}/jobs_u/resume/[0-9a-f-]{36}/\\d+/[0-9a-f]{64}\\?approver=alice$`));

    // No token is needed: the signed URL is the secret.
    const first = await s.fetch(local(urls.alice.resume), { ...json({ reason: 'ok', amount: 5 }), token: null });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ approvals_received: 1, approvals_required: 2 });
    // A replay does not count twice.
    const replay = await s.fetch(local(urls.alice.resume), { ...json({ reason: 'again' }), token: null });
    expect(replay.status).toBe(409);
    // A changed signature or approver is refused, and changes nothing.
    const forged = local(urls.bob.resume).replace(/\/([0-9a-f]{64})/, (_, sig: string) => `/${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`);
    expect((await s.fetch(forged, { ...json({ reason: 'forged' }), token: null })).status).toBe(403);
    expect((await s.fetch(local(urls.bob.resume).replace('approver=bob', 'approver=mallory'), { ...json({}), token: null })).status).toBe(403);
    const still = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    expect(still.status).toBe('suspended');
    expect(still.flow_status.suspend.approvals_received).toBe(1);

    // A GET counts too (a link in a mail), with its query as the payload.
    expect((await s.fetch(`${local(urls.bob.resume)}&reason=fine&amount=7`, { token: null })).status).toBe(200);
    const done = await waitForJob(s, id);
    expect(done.status).toBe('success');
    expect(done.result).toEqual({ resume: { reason: 'fine', amount: '7' }, approvers: ['alice', 'bob'], asked: ['alice', 'bob'] });
  });

  it('refuses (400) a posted form value of another type than the form declares, and counts nothing', async () => {
    await createFlow('u/admin/typed', approvalFlow({ required_events: 1, resume_form: FORM }));
    const { id, urls } = await runUntilSuspended('u/admin/typed', { approvers: ['ivy'] });
    for (const [body, field] of [
      [{ reason: 5 }, 'reason'],
      [{ reason: 'ok', amount: 'five' }, 'amount'],
      [{ reason: 'ok', amount: [5] }, 'amount'],
    ] as const) {
      const res = await s.fetch(local(urls.ivy.resume), { ...json(body), token: null });
      expect(res.status, JSON.stringify(body)).toBe(400);
      const { error } = await res.json();
      expect(error).toMatchObject({ code: 'invalid_payload', field });
    }
    expect((await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).flow_status.suspend.approvals_received).toBe(0);
    // The refused ones did not use the URL up: the right types count.
    expect((await s.fetch(local(urls.ivy.resume), { ...json({ reason: 'ok', amount: 5 }), token: null })).status).toBe(200);
    expect((await waitForJob(s, id)).result.resume).toEqual({ reason: 'ok', amount: 5 });
  });

  it('cancels the flow from the cancel URL, or goes on with an error payload when the step continues on error', async () => {
    await createFlow('u/admin/cancellable', approvalFlow({ required_events: 1 }));
    const canceled = await runUntilSuspended('u/admin/cancellable', { approvers: ['carol'] });
    expect((await s.fetch(local(canceled.urls.carol.cancel), { ...json({ reason: 'too expensive' }), token: null })).status).toBe(200);
    const job = await waitForJob(s, canceled.id);
    expect(job.status).toBe('canceled');
    expect(job.result.error.message).toContain('too expensive');
    expect((await s.fetch(local(canceled.urls.carol.resume), { ...json({}), token: null })).status).toBe(409);

    await createFlow('u/admin/tolerant', approvalFlow({ required_events: 1 }, { continue_on_error: true }));
    const tolerant = await runUntilSuspended('u/admin/tolerant', { approvers: ['carol'] });
    await s.fetch(local(tolerant.urls.carol.cancel), { method: 'GET', token: null });
    const went_on = await waitForJob(s, tolerant.id);
    expect(went_on.status).toBe('success');
    expect(went_on.result.resume.error).toMatchObject({ name: 'Canceled' });
    expect(went_on.result.approvers).toEqual([]);
  });

  it('cancels a flow whose approvals do not arrive in time, or goes on with an error payload', async () => {
    await createFlow('u/admin/hurry', approvalFlow({ required_events: 1, timeout: 1 }));
    const late = await runUntilSuspended('u/admin/hurry', { approvers: ['dan'] });
    const timedOut = await waitForJob(s, late.id);
    expect(timedOut.status).toBe('canceled');
    expect(timedOut.result.error).toMatchObject({ name: 'SuspendTimeout', step_id: 'ask' });

    await createFlow('u/admin/hurry_on', approvalFlow({ required_events: 1, timeout: 1 }, { continue_on_error: true }));
    const goesOn = await runUntilSuspended('u/admin/hurry_on', { approvers: ['dan'] });
    const done = await waitForJob(s, goesOn.id);
    expect(done.status).toBe('success');
    expect(done.result.resume.error.name).toBe('SuspendTimeout');
  });

  it('refuses self-approval and anonymous approval when the step says so, on the resume endpoint', async () => {
    const token = async (username: string) => {
      await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` });
      await s.post(`${ws()}/workspaces/add_user`, { username, role: 'developer' });
      const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
      return (login.headers.get('set-cookie') ?? '').split(';')[0];
    };
    const erin = await token('erin');
    const frank = await token('frank');
    const erinToken = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'x' }), token: null, headers: { cookie: erin, 'content-type': 'application/json' } })).text();
    await createFlow('u/erin/payout', approvalFlow({ required_events: 1, self_approval_disabled: true }), erinToken);
    const { id, urls } = await runUntilSuspended('u/erin/payout', { approvers: ['anyone'] }, erinToken);

    const anonymous = await s.fetch(local(urls.anyone.resume), { ...json({}), token: null });
    expect(anonymous.status).toBe(401);
    const self = await s.fetch(local(urls.anyone.resume), { ...json({}), token: null, headers: { cookie: erin, 'content-type': 'application/json' } });
    expect(self.status).toBe(403);
    expect((await self.json()).error.message).toBe('the user who triggered the flow may not approve it');
    expect((await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).flow_status.suspend.approvals_received).toBe(0);

    const other = await s.fetch(local(urls.anyone.resume), { ...json({ reason: 'ok' }), token: null, headers: { cookie: frank, 'content-type': 'application/json' } });
    expect(other.status).toBe(200);
    const done = await waitForJob(s, id);
    expect(done.result.approvers).toEqual(['frank']);
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
    const pre = `import svc

def main():
    return svc.get_resume_urls(approver="early-bird", flow_level=True)
`;
    const gate = (id: string) => ({ id, value: { type: 'rawscript', language: 'bun', content: 'export function main() { return "gate" }', input_transforms: {} }, suspend: { required_events: 1, timeout: 600 } });
    await createFlow('u/admin/preapproved', {
      modules: [
        { id: 'pre', value: { type: 'rawscript', language: 'python3', content: pre, input_transforms: {} } },
        { id: 'work', value: { type: 'rawscript', language: 'bun', content: 'export async function main() { await new Promise((r) => setTimeout(r, 1500)); return "worked" }', input_transforms: {} } },
        gate('first_gate'),
        { id: 'seen', value: { type: 'rawscript', language: 'bun', content: 'export function main(a: string[]) { return a }', input_transforms: { a: { type: 'javascript', expr: 'approvers' } } } },
        gate('second_gate'),
      ],
    });
    const id = await (await s.post(`${ws()}/jobs/run/p/u/admin/preapproved`, {})).text();
    // While `work` runs, approve through the pre-approval URL `pre` handed out.
    let urls: { resume: string; approval_page: string } | undefined;
    for (const deadline = Date.now() + 20_000; !urls && Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      urls = (await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).flow_status?.results?.pre;
    }
    expect(urls!.resume).toContain('flow_level=true');
    expect((await s.fetch(local(urls!.resume), { ...json({ ok: true }), token: null })).status).toBe(200);

    // The first gate goes through on it; the second one waits: a pre-approval is used up once.
    let job: any;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
      if (job.status === 'suspended' && job.flow_status.suspend.module === 'second_gate') break;
    }
    expect(job.flow_status.suspend.module).toBe('second_gate');
    expect(job.flow_status.results.seen).toEqual(['early-bird']);
    expect((await s.fetch(local(urls!.resume), { ...json({}), token: null })).status).toBe(409);
    await s.post(`${ws()}/jobs_u/queue/cancel/${id}`, {});
    expect((await waitForJob(s, id)).status).toBe('canceled');
  });

  it('lets only members of a group approve, the group coming from another step', async () => {
    const session = async (username: string) => {
      await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` });
      await s.post(`${ws()}/workspaces/add_user`, { username, role: 'operator' });
      const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
      return (login.headers.get('set-cookie') ?? '').split(';')[0];
    };
    const henry = await session('henry');
    const ivy = await session('ivy');
    await s.post(`${ws()}/groups/create`, { name: 'finance' });
    await s.post(`${ws()}/groups/adduser/finance`, { username: 'henry' });
    const value = approvalFlow({ required_events: 1, user_groups_required: { type: 'javascript', expr: 'results.pick.groups' } });
    value.modules.unshift({ id: 'pick', value: { type: 'rawscript', language: 'python3', content: 'def main():\n    return {"groups": ["finance"]}\n', input_transforms: {} } } as any);
    await createFlow('u/admin/finance_only', value);
    const { id, urls } = await runUntilSuspended('u/admin/finance_only', { approvers: ['x'] });

    const asIvy = await s.fetch(local(urls.x.resume), { ...json({}), token: null, headers: { cookie: ivy, 'content-type': 'application/json' } });
    expect(asIvy.status).toBe(403);
    expect((await asIvy.json()).error.message).toBe('only members of finance may approve this step');
    expect((await s.fetch(local(urls.x.resume), { ...json({}), token: null })).status).toBe(401);
    const asHenry = await s.fetch(local(urls.x.resume), { ...json({ reason: 'ok' }), token: null, headers: { cookie: henry, 'content-type': 'application/json' } });
    expect(asHenry.status).toBe(200);
    expect((await waitForJob(s, id)).result.approvers).toEqual(['henry']);
  });

  it('shows a step that returns its resume URL as a prompt the runner may approve themselves (spec 2.6)', async () => {
    const prompt = `import * as svc from 'svc-client';
export async function main() {
  return { ...(await svc.getResumeUrls()), default_args: { size: 'M' }, enums: { size: ['S', 'M', 'L'] }, description: 'Pick a size' };
}`;
    await createFlow('u/admin/prompted', {
      modules: [
        { id: 'ask', value: { type: 'rawscript', language: 'bun', content: prompt, input_transforms: {} }, suspend: { required_events: 1 } },
        { id: 'after', value: { type: 'rawscript', language: 'bun', content: 'export function main(r: any) { return r }', input_transforms: { r: { type: 'javascript', expr: 'resume' } } } },
      ],
    });
    const id = await (await s.post(`${ws()}/jobs/run/p/u/admin/prompted`, {})).text();
    let job: any;
    for (const deadline = Date.now() + 20_000; job?.status !== 'suspended' && Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    }
    const shown = job.flow_status.suspend.prompt;
    expect(shown).toMatchObject({ default_args: { size: 'M' }, enums: { size: ['S', 'M', 'L'] }, description: 'Pick a size' });
    expect(shown.resume).toContain('/jobs_u/resume/');
    // The admin who ran the flow answers their own prompt.
    expect((await s.fetch(local(shown.resume), { ...json({ size: 'L' }) })).status).toBe(200);
    expect((await waitForJob(s, id)).result).toEqual({ size: 'L' });
  });
});
