import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessService, json, until, type InProcessService } from './harness.js';

/**
 * After an approval, the approval page says so instead of offering the form again (issue 17
 * point 4): to a person who approved through another URL of a step that counts people, once a
 * step resumed with a pre-approval in its count, and a pre-approval's own page is open (not
 * "finished") until the flow ends. Each test failed before its fix.
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

async function session(username: string) {
  await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` });
  await s.post(`${ws}/workspaces/add_user`, { username, role: 'operator' });
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  return (login.headers.get('set-cookie') ?? '').split(';')[0];
}

async function createFlow(path: string, value: unknown) {
  const res = await s.fetch(`${ws}/flows/create`, json({ path, value }));
  expect(res.status, await res.clone().text()).toBe(201);
}

async function page(url: string, cookie?: string): Promise<string> {
  const res = await s.fetch(local(url), { token: null, headers: cookie ? { cookie } : {} });
  expect(res.status).toBe(200);
  return res.text();
}

describe('the approval page after an approval', () => {
  it('tells a person who approved through one URL so on every other URL of the step, with no form', async () => {
    const lea = await session('lea');
    await createFlow('u/admin/people', { modules: [step('ask', ASK, {}, { suspend: { required_events: 2, user_auth_required: true } })] });
    const id = await (await s.post(`${ws}/jobs/run/p/u/admin/people`, {})).text();
    const urls = (await s.job(id)).flow_status.results.ask;
    const before = await page(urls.b.approvalPage, lea);
    expect(before).toContain('id="approve"');

    const approved = await s.fetch(local(urls.a.resume), { ...json({}), token: null, headers: { cookie: lea, 'content-type': 'application/json' } });
    expect(approved.status).toBe(200);
    const after = await page(urls.b.approvalPage, lea);
    expect(after).toContain('you already approved this step as lea: a person counts once');
    expect(after).not.toContain('id="approve"');
    expect(after).toContain('<span id="approvals-received">1</span> of <span id="approvals-required">2</span>');
  });

  it('says the step was approved once a pre-approval and its own approval resumed it', async () => {
    let release!: () => void;
    (globalThis as Record<string, unknown>).release_pre_page = new Promise<void>((r) => (release = r));
    await createFlow('u/admin/pre_page', {
      modules: [
        step('pre', `import * as svc from 'svc-client';\nexport function main() { return svc.getResumeUrls('early', true) }`),
        step('work', 'export async function main() { await (globalThis as any).release_pre_page; return 1 }'),
        step('ask', ASK, {}, { suspend: { required_events: 2 } }),
        step('after', 'export function main(a: string[]) { return a }', { a: js('approvers') }),
      ],
    });
    const id = await (await s.post(`${ws}/jobs/run/p/u/admin/pre_page`, {})).text();
    const view = async () => (await (await s.fetch(`${ws}/jobs_u/get/${id}`)).json()) as Record<string, any>;
    const pre = (await until(view, (j) => j.flow_status?.results?.pre !== undefined)).flow_status.results.pre as { resume: string; approvalPage: string };

    // The pre-approval's own page, while the flow still works towards its approval step: open.
    const open = await page(pre.approvalPage);
    expect(open).not.toContain('The flow has already finished.');
    expect(open).toContain('id="approve"');
    expect((await s.fetch(local(pre.resume), { ...json({}), token: null })).status).toBe(200);
    release();

    const waiting = await s.job(id);
    expect(waiting.flow_status.suspend.approvals_received).toBe(1);
    expect((await s.fetch(local(waiting.flow_status.results.ask.a.resume), { ...json({}), token: null })).status).toBe(200);
    expect(await s.job(id)).toMatchObject({ status: 'success', result: ['early', 'a'] });

    const after = await page(waiting.flow_status.results.ask.a.approvalPage);
    expect(after).toContain('This step has been approved and the flow has resumed.');
    expect(after).not.toContain('id="approve"');
  });
});
