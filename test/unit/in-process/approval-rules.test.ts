import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessService, json, until, type InProcessService } from './harness.js';

/**
 * Approval steps keep their own rules (issue 17 point 4): a pre-approval obeys the rules of the
 * step that counts it, `user_groups_required` takes a string, a list or an expression returning
 * either, a module's `schema` is kept, counts include pre-approvals, the resume API enforces the
 * form's required fields, and with a login required one person counts once. Each test failed
 * before its fix.
 */

let s: InProcessService;
beforeAll(async () => {
  s = await inProcessService();
});

const ws = '/api/w/main';
const js = (expr: string) => ({ type: 'javascript', expr });
const step = (id: string, content: string, input_transforms: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  id,
  value: { type: 'rawscript', language: 'bun', content, input_transforms },
  ...extra,
});
const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');
const ASK = `import * as svc from 'svc-client';\nexport async function main() { return { a: await svc.getResumeUrls('a'), b: await svc.getResumeUrls('b') } }`;

async function session(username: string, role: string) {
  await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` });
  await s.post(`${ws}/workspaces/add_user`, { username, role });
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  return (login.headers.get('set-cookie') ?? '').split(';')[0];
}
const withCookie = (cookie: string, body: unknown) => ({ ...json(body), token: null, headers: { cookie, 'content-type': 'application/json' } });

async function createFlow(path: string, value: unknown) {
  const res = await s.fetch(`${ws}/flows/create`, json({ path, value }));
  expect(res.status, await res.clone().text()).toBe(201);
}

async function suspended(path: string) {
  const id = await (await s.post(`${ws}/jobs/run/p/${path}`, {})).text();
  const job = await s.job(id);
  if (job.status !== 'suspended') throw new Error(`flow is ${job.status}: ${JSON.stringify(job.result)}`);
  return { id, job };
}

/** A flow whose first step hands out a pre-approval URL, then works until released, then asks. */
async function preApprovedFlow(path: string, suspend: Record<string, unknown>) {
  let release!: () => void;
  (globalThis as Record<string, unknown>)[`release_${path.replaceAll('/', '_')}`] = new Promise<void>((r) => (release = r));
  await createFlow(path, {
    modules: [
      step('pre', `import * as svc from 'svc-client';\nexport function main() { return svc.getResumeUrls('early', true) }`),
      step('work', `export async function main() { await (globalThis as any).release_${path.replaceAll('/', '_')}; return 1 }`),
      step('ask', ASK, {}, { suspend }),
      step('after', 'export function main(a: string[]) { return a }', { a: js('approvers') }),
    ],
  });
  const id = await (await s.post(`${ws}/jobs/run/p/${path}`, {})).text();
  const view = async () => (await (await s.fetch(`${ws}/jobs_u/get/${id}`)).json()) as Record<string, any>;
  const pre = (await until(view, (j) => j.flow_status?.results?.pre !== undefined)).flow_status.results.pre as { resume: string };
  return { id, pre, release };
}

describe('approval steps keep their rules', () => {
  it('does not let an anonymous pre-approval through a step that needs a login', async () => {
    const { id, pre, release } = await preApprovedFlow('u/admin/pre_login', { required_events: 1, user_auth_required: true });
    expect((await s.fetch(local(pre.resume), { ...json({}), token: null })).status).toBe(200);
    release();
    const job = await s.job(id);
    expect(job.status).toBe('suspended');
    expect(job.flow_status.suspend.approvals_received).toBe(0);
  });

  it('refuses a pre-approval by the triggering user at a step that disables self-approval, once the flow waits there', async () => {
    const { id, pre, release } = await preApprovedFlow('u/admin/pre_self', { required_events: 1, self_approval_disabled: true });
    release();
    expect((await s.job(id)).status).toBe('suspended');
    const self = await s.fetch(local(pre.resume), json({}));
    expect(self.status).toBe(403);
    expect((await s.job(id)).status).toBe('suspended');
  });

  it('counts an unused pre-approval in the step\'s approvals', async () => {
    const { id, pre, release } = await preApprovedFlow('u/admin/pre_count', { required_events: 2 });
    const answer = await s.fetch(local(pre.resume), { ...json({}), token: null });
    expect(answer.status).toBe(200);
    release();
    const job = await s.job(id);
    expect(job.status).toBe('suspended');
    expect(job.flow_status.suspend.approvals_received).toBe(1);
    const second = await s.fetch(local(job.flow_status.results.ask.a.resume), { ...json({}), token: null });
    expect(await second.json()).toMatchObject({ approvals_received: 2, approvals_required: 2 });
    expect((await s.job(id)).result).toEqual(['early', 'a']);
  });

  it('takes user_groups_required as a string, a list, or an expression returning a string', async () => {
    const henry = await session('henry', 'operator');
    const ivy = await session('ivy', 'operator');
    await s.post(`${ws}/groups/create`, { name: 'treasury' });
    await s.post(`${ws}/groups/adduser/treasury`, { username: 'henry' });
    const forms = { string: 'treasury', list: ['treasury'], static: { type: 'static', value: 'treasury' }, expression: js('"treasury"') };
    for (const [name, groups] of Object.entries(forms)) {
      await createFlow(`u/admin/groups_${name}`, { modules: [step('ask', ASK, {}, { suspend: { required_events: 1, user_groups_required: groups } })] });
      const { id, job } = await suspended(`u/admin/groups_${name}`);
      const resume = local(job.flow_status.results.ask.a.resume);
      expect((await s.fetch(resume, withCookie(ivy, {}))).status, name).toBe(403);
      expect((await s.fetch(resume, withCookie(henry, {}))).status, name).toBe(200);
      expect((await s.job(id)).status, name).toBe('success');
    }
  });

  it('keeps a module\'s schema', async () => {
    const schema = { type: 'object', properties: { amount: { type: 'number' } }, required: [] };
    await createFlow('u/admin/with_schema', { modules: [{ ...step('one', 'export function main() { return 1 }'), schema }] });
    const flow = await (await s.fetch(`${ws}/flows/get/u/admin/with_schema`)).json();
    expect(flow.value.modules[0].schema).toEqual(schema);
  });

  it('refuses a resume payload missing a required form field, as the page does', async () => {
    const form = { schema: { properties: { reason: { type: 'string' } }, required: ['reason'] } };
    await createFlow('u/admin/form_required', { modules: [step('ask', ASK, {}, { suspend: { required_events: 1, resume_form: form } })] });
    const { id, job } = await suspended('u/admin/form_required');
    const resume = local(job.flow_status.results.ask.a.resume);
    const missing = await s.fetch(resume, { ...json({}), token: null });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('reason');
    expect((await s.job(id)).status).toBe('suspended');
    expect((await s.fetch(resume, { ...json({ reason: 'fine' }), token: null })).status).toBe(200);
    const done = await s.job(id);
    expect(done.status).toBe('success');
    // The audit trail: who, when, through which URL, with which values.
    expect(done.flow_status.audit).toEqual([{ step: 'ask', event: 'approved', at: expect.any(String), who: 'a', via: expect.stringMatching(/^resume URL \d+$/), values: { reason: 'fine' }, logged_in: false }]);
  });

  it('counts one logged-in person once, however many resume URLs they open', async () => {
    const jo = await session('jo', 'operator');
    const kim = await session('kim', 'operator');
    await createFlow('u/admin/two_people', { modules: [step('ask', ASK, {}, { suspend: { required_events: 2, user_auth_required: true } })] });
    const { id, job } = await suspended('u/admin/two_people');
    const urls = job.flow_status.results.ask;
    expect((await s.fetch(local(urls.a.resume), withCookie(jo, {}))).status).toBe(200);
    expect((await s.fetch(local(urls.b.resume), withCookie(jo, {}))).status).toBe(409);
    expect((await s.job(id)).status).toBe('suspended');
    expect((await s.fetch(local(urls.b.resume), withCookie(kim, {}))).status).toBe(200);
    expect((await s.job(id)).status).toBe('success');
  });

  it('resumes with default_on_timeout as the payload when the timeout elapses, with no approvers', async () => {
    await createFlow('u/admin/default_on_timeout', {
      modules: [
        step('ask', ASK, {}, { suspend: { required_events: 1, timeout: 60, default_on_timeout: { decision: 'auto' } } }),
        step('after', 'export function main(r: any, a: string[]) { return { r, a } }', { r: js('resume'), a: js('approvers') }),
      ],
    });
    const { id } = await suspended('u/admin/default_on_timeout');
    s.clock.advance(61_000);
    await s.flows.wakeDue(s.clock.now());
    expect(await s.job(id)).toMatchObject({ status: 'success', result: { r: { decision: 'auto', timed_out: true }, a: [] } });
  });
});
