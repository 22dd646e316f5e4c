import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessService, json, until, type InProcessService } from './harness.js';

/**
 * Which approval steps the `/approvals` page offers a person: those of runs they may read, or
 * whose group rule names a group of theirs, that the resume API would let them approve and that
 * they have not approved yet; each with one URL per person and step, so reloading the page never
 * makes a second approval. (test/browser/approvals-inbox.test.ts decides them in Chromium.)
 */

let s: InProcessService;
let fiona: string;
let fionaToken: string;
beforeAll(async () => {
  s = await inProcessService();
  fiona = await session('fiona', 'developer');
  fionaToken = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'inbox' }), token: null, headers: { cookie: fiona, 'content-type': 'application/json' } })).text();
  await s.post(`${ws}/groups/create`, { name: 'finance' });
  await s.post(`${ws}/groups/adduser/finance`, { username: 'fiona' });
});

const ws = '/api/w/main';
const ASK = `import * as svc from 'svc-client';\nexport async function main() { return { fiona: await svc.getResumeUrls('fiona') } }`;

async function session(username: string, role: string) {
  await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` });
  await s.post(`${ws}/workspaces/add_user`, { username, role });
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  return (login.headers.get('set-cookie') ?? '').split(';')[0];
}

/** A flow with one approval step, run as `as` (a token, or the admin's); the run id once suspended. */
async function suspendedRun(path: string, suspend: Record<string, unknown>, as?: string): Promise<{ id: string; urls: Record<string, { resume: string }> }> {
  const token = as ?? s.token;
  const create = await s.fetch(`${ws}/flows/create`, { ...json({ path, value: { modules: [{ id: 'ask', value: { type: 'rawscript', language: 'bun', content: ASK, input_transforms: {} }, suspend }] } }), token });
  expect(create.status, await create.clone().text()).toBe(201);
  const id = await (await s.fetch(`${ws}/jobs/run/p/${path}`, { ...json({}), token })).text();
  const job = await s.job(id);
  expect(job.status).toBe('suspended');
  return { id, urls: job.flow_status.results.ask };
}

async function inbox(): Promise<string> {
  const res = await s.fetch('/approvals', { token: null, headers: { cookie: fiona } });
  expect(res.status).toBe(200);
  return res.text();
}

const resumeUrlOf = (page: string, runId: string) => /data-resume="([^"]+)"/.exec(page.slice(page.indexOf(runId)))?.[1].replaceAll('&amp;', '&');

describe('approval steps on the approvals page', () => {
  it('offers steps of runs the person may read, or that ask a group of theirs, and no others', async () => {
    const own = await suspendedRun('u/fiona/own', { required_events: 1 }, fionaToken);
    const asked = await suspendedRun('u/admin/asks_finance', { required_events: 1, user_groups_required: 'finance' });
    const unreadable = await suspendedRun('u/admin/private', { required_events: 1 });
    const selfRun = await suspendedRun('u/fiona/not_herself', { required_events: 1, self_approval_disabled: true }, fionaToken);
    const page = await inbox();
    expect(page).toContain(`step ask ${own.id}`);
    expect(page).toContain(`step ask ${asked.id}`);
    expect(page).not.toContain(unreadable.id);
    expect(page).not.toContain(selfRun.id);
  });

  it('gives the same URL on every load, so one person approves once; and drops a step they approved another way', async () => {
    const twice = await suspendedRun('u/admin/twice', { required_events: 2, user_groups_required: 'finance' });
    const first = resumeUrlOf(await inbox(), twice.id)!;
    expect(resumeUrlOf(await inbox(), twice.id)).toBe(first);
    const post = (url: string) => s.fetch(url, { ...json({}), token: null, headers: { cookie: fiona, 'content-type': 'application/json' } });
    expect((await post(first)).status).toBe(200);
    expect(await inbox()).not.toContain(twice.id);
    expect((await post(first)).status).toBe(409);

    // No login rule: the step counts URLs, but the page does not offer it again to the person named in one.
    const named = await suspendedRun('u/fiona/named', { required_events: 2 }, fionaToken);
    expect(await inbox()).toContain(named.id);
    expect((await s.fetch(named.urls.fiona.resume.replace(/^https?:\/\/[^/]+/, ''), { ...json({}), token: null })).status).toBe(200);
    expect(await inbox()).not.toContain(named.id);
    expect((await s.job(named.id)).flow_status.suspend.approvals_received).toBe(1);
  });

  it("shows a gate's history to its approvers without the webhook URL's path, which may hold a secret", async () => {
    const url = 'http://127.0.0.1:1/hooks/T000/s3cr3t-path';
    const gate = { type: 'consentgate', approvers: ['fiona'], notify: [{ channel: 'webhook', url }], message: 'ok?' };
    expect((await s.post(`${ws}/flows/create`, { path: 'u/admin/hooked', value: { modules: [{ id: 'gate', value: gate }] } })).status).toBe(201);
    const id = await (await s.post(`${ws}/jobs/run/p/u/admin/hooked`, {})).text();
    const view = async () => (await (await s.fetch(`${ws}/jobs_u/get/${id}`)).json()) as Record<string, any>;
    const job = await until(view, (j) => j.flow_status?.gate?.notices === 'done', 100_000);
    expect(job.flow_status.gate.deliveries).toHaveLength(3);
    const page = await inbox();
    expect(page).toContain(`data-run="${id}"`);
    expect(page).toContain('notice_failed · 127.0.0.1:1 · webhook (attempt 3)');
    expect(page).not.toContain('s3cr3t');
  });
});
