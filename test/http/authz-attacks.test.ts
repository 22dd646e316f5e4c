import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, signUpMember, startServer, waitForJob, type Member, type TestServer } from './harness.js';

/**
 * Authorization attacks by hostile workspace members and outsiders (red team), over real HTTP in
 * both shells: each one is tried as an attacker would, and must end in a clear 4xx (or a run that
 * reveals nothing) and change nothing.
 */

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const SECRET = `s3cret-${Math.random().toString(36).slice(2)}`;

const people: Record<string, Member> = {};
const person = (username: string, role: 'admin' | 'developer' | 'operator') => signUpMember(s, username, role);

const as = (who: string, path: string, init: RequestInit = {}) => s.fetch(path, { ...init, token: people[who].token });
/** A call to a workspace route without any token. */
const call = (path: string, init: RequestInit = {}) => s.fetch(`/api/r/${s.workspace}/${path}`, { ...init, token: null });

beforeAll(async () => {
  s = await startServer();
  for (const [name, role] of [['dev', 'developer'], ['op', 'operator']] as const) people[name] = await person(name, role);
  expect((await s.post(`${ws()}/variables/create`, { path: 'u/admin/db_password', value: SECRET, is_secret: true })).status).toBe(201);
  expect((await s.post(`${ws()}/folders/create`, { name: 'vault', owners: ['u/admin'] })).status).toBe(201);
  expect((await s.post(`${ws()}/variables/create`, { path: 'f/vault/key', value: SECRET, is_secret: true })).status).toBe(201);
  await createScript(s, 'u/admin/echo', 'bun', 'export function main(x: unknown) { return { x }; }');
  expect((await s.post(`${ws()}/folders/create`, { name: 'open', owners: ['u/admin'], extra_perms: { 'g/all': false } })).status).toBe(201);
  await createScript(s, 'f/open/echo', 'bun', 'export function main(x: unknown) { return { x }; }');
  expect((await as('dev', `${ws()}/variables/create`, json({ path: 'u/dev/mine', value: 'dev-value', is_secret: true }))).status).toBe(201);
}, 120_000);
afterAll(() => s?.stop());

describe('a route called without a svc token', () => {
  it("may not pass a $var: or $res: reference, which the run would read as the route's author: a 400 naming the argument, no run", async () => {
    const created = await s.post(`${ws()}/http_triggers/create`, { path: 'u/admin/echo_route', route_path: 'echo', http_method: 'post', script_path: 'u/admin/echo', authentication_method: 'none' });
    expect(created.status, await created.clone().text()).toBe(201);
    const runsBefore = (await (await s.fetch(`${ws()}/jobs/list?script_path_exact=u/admin/echo`)).json()).length;
    for (const [body, at] of [
      [{ x: '$var:u/admin/db_password' }, 'x'],
      [{ x: '$var:f/vault/key' }, 'x'],
      // Deep inside the body too: a flow's step may take it as its own argument.
      [{ x: { nested: ['fine', '$res:f/vault/conn'] } }, 'x.nested[1]'],
    ] as const) {
      const res = await call('echo', json(body));
      const text = await res.text();
      expect(text).not.toContain(SECRET);
      expect(res.status, text).toBe(400);
      expect(JSON.parse(text).error).toMatchObject({ code: 'reference_not_allowed' });
      expect(JSON.parse(text).error.message).toContain(`${at}:`);
    }
    // The raw body of a raw_string route, and a query parameter, alike.
    expect((await call('echo?x=%24var%3Af%2Fvault%2Fkey', { method: 'POST' })).status).toBe(400);
    expect((await (await s.fetch(`${ws()}/jobs/list?script_path_exact=u/admin/echo`)).json()).length).toBe(runsBefore);
    // Anything else still runs.
    const plain = await call('echo', json({ x: 'hello $var: in the middle' }));
    expect(plain.status).toBe(200);
    expect(await plain.json()).toEqual({ x: 'hello $var: in the middle' });
  });

  it("resolves a reference a svc-authenticated caller passes with that caller's own rights only", async () => {
    const created = await s.post(`${ws()}/http_triggers/create`, { path: 'u/admin/echo_svc', route_path: 'echo_svc', http_method: 'post', script_path: 'f/open/echo', authentication_method: 'svc' });
    expect(created.status, await created.clone().text()).toBe(201);
    const res = await call('echo_svc', { ...json({ x: '$var:f/vault/key' }), headers: { 'content-type': 'application/json', authorization: `Bearer ${people.dev.token}` } });
    const text = await res.text();
    expect(text).not.toContain(SECRET);
    expect(JSON.parse(text).error).toMatchObject({ name: 'BindingError' });
    const mine = await call('echo_svc', { ...json({ x: '$var:u/dev/mine' }), headers: { 'content-type': 'application/json', authorization: `Bearer ${people.dev.token}` } });
    expect(await mine.json()).toEqual({ x: 'dev-value' });
  });
});

describe("an approval step's form values", () => {
  it("may not hold a $var: or $res: reference, which the flow's next step would read as the flow's creator: an operator who reads the flow gets a 400, not the admin's secret", async () => {
    expect((await s.post(`${ws()}/folders/create`, { name: 'ops', owners: ['u/admin'], extra_perms: { 'g/all': false } })).status).toBe(201);
    const value = {
      modules: [
        {
          id: 'ask',
          value: { type: 'rawscript', language: 'bun', input_transforms: {}, content: 'import * as svc from "svc-client";\nexport async function main() { return await svc.getResumeUrls(); }' },
          suspend: { required_events: 1, timeout: 3600, resume_form: { schema: { properties: { note: { type: 'string' } }, required: ['note'], order: ['note'] } } },
        },
        { id: 'pay', value: { type: 'rawscript', language: 'bun', content: 'export function main(note: string) { return `paid (${note})`; }', input_transforms: { note: { type: 'javascript', expr: 'resume.note' } } } },
      ],
    };
    expect((await s.post(`${ws()}/flows/create`, { path: 'f/ops/refund', value })).status).toBe(201);
    const id = await (await s.fetch(`${ws()}/jobs/run/p/f/ops/refund`, json({}))).text();
    let resume = '';
    let cancel = '';
    for (const deadline = Date.now() + 30_000; !resume; await new Promise((r) => setTimeout(r, 50))) {
      // The operator reads the run (and with it the step's resume URLs): they may read f/ops.
      const job = await (await as('op', `${ws()}/jobs_u/get/${id}`)).json();
      if (job.status === 'suspended') ({ resume, cancel } = job.flow_status.results.ask);
      if (Date.now() > deadline) throw new Error(`flow still ${job.status}`);
    }
    const local = resume.replace(/^https?:\/\/[^/]+/, '');
    for (const note of ['$var:f/vault/key', '$res:f/vault/conn']) {
      const res = await s.fetch(local, { ...json({ note }), token: null });
      const text = await res.text();
      expect(res.status, text).toBe(400);
      expect(JSON.parse(text).error).toMatchObject({ code: 'reference_not_allowed' });
      expect(JSON.parse(text).error.message).toContain('note:');
    }
    // Nor a cancel's reason, which a step that goes on after a cancel would see.
    const canceled = await s.fetch(cancel.replace(/^https?:\/\/[^/]+/, ''), { ...json({ reason: '$var:f/vault/key' }), token: null });
    expect(canceled.status, await canceled.clone().text()).toBe(400);
    // Nothing was counted: an honest note still resumes the flow.
    const ok = await s.fetch(local, { ...json({ note: 'approved' }), token: null });
    expect(ok.status, await ok.clone().text()).toBe(200);
    const done = await waitForJob(s, id, 30_000);
    expect(done.result).toBe('paid (approved)');
    expect(JSON.stringify(done)).not.toContain(SECRET);
  });
});

describe('a session opened with an API token', () => {
  const login = async (token: string) => {
    const res = await s.fetch('/api/auth/login', { ...json({ token }), token: null });
    expect(res.status, await res.clone().text()).toBe(200);
    return (res.headers.get('set-cookie') ?? '').split(';')[0];
  };
  const whoami = (cookie: string) => s.fetch('/api/users/whoami', { token: null, headers: { cookie } });
  const newToken = async (body: Record<string, unknown>) => {
    const res = await as('dev', '/api/users/tokens/create', json({ label: 'leaked', ...body }));
    expect(res.status).toBe(201);
    return res.text();
  };

  it('ends when the token is deleted: a stolen token turned into a cookie does not outlive its revocation', async () => {
    const leaked = await newToken({});
    const cookie = await login(leaked);
    expect((await whoami(cookie)).status).toBe(200);
    const prefix = (await (await as('dev', '/api/users/tokens/list')).json()).find((t: { label: string }) => t.label === 'leaked').token_prefix;
    expect((await as('dev', `/api/users/tokens/delete/${prefix}`, { method: 'DELETE' })).status).toBe(200);
    expect((await whoami(cookie)).status).toBe(401);
    // The owner's other sessions and tokens are untouched.
    expect((await s.fetch('/api/users/whoami', { token: null, headers: { cookie: people.dev.cookie } })).status).toBe(200);
    expect((await as('dev', '/api/users/whoami')).status).toBe(200);
  });

  it('ends when the token expires, not 7 days later', async () => {
    const expiration = new Date(Date.now() + 3000).toISOString();
    const cookie = await login(await newToken({ label: 'short', expiration }));
    expect((await whoami(cookie)).status).toBe(200);
    await new Promise((r) => setTimeout(r, Date.parse(expiration) - Date.now() + 300));
    expect((await whoami(cookie)).status).toBe(401);
  });
});

describe("a ConsentGate decision's reason", () => {
  it("may not hold a $var: or $res: reference, which the flow's next step would read as the flow's creator", async () => {
    const value = {
      modules: [
        { id: 'gate', value: { type: 'consentgate', approvers: ['op'], timeout: 3600, message: 'go?' } },
        { id: 'after', value: { type: 'rawscript', language: 'bun', content: 'export function main(why: string) { return why; }', input_transforms: { why: { type: 'javascript', expr: 'results.gate.reason' } } } },
      ],
    };
    expect((await s.post(`${ws()}/flows/create`, { path: 'f/ops/gated', value })).status).toBe(201);
    const id = await (await s.fetch(`${ws()}/jobs/run/p/f/ops/gated`, json({}))).text();
    for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 50))) {
      const job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
      if (job.status === 'awaiting_approval') break;
      if (Date.now() > deadline) throw new Error(`flow still ${job.status}`);
    }
    const decide = (reason: string) => s.fetch(`/api/v1/runs/${id}/consent`, { ...json({ decision: 'approved', reason }), token: null, headers: { 'content-type': 'application/json', cookie: people.op.cookie, origin: s.url } });
    const refused = await decide('$var:f/vault/key');
    const text = await refused.text();
    expect(refused.status, text).toBe(400);
    expect(JSON.parse(text).error).toMatchObject({ code: 'reference_not_allowed' });
    const ok = await decide('looks fine');
    expect(ok.status, await ok.clone().text()).toBe(200);
    const done = await waitForJob(s, id, 30_000);
    expect(done.result).toBe('looks fine');
  });
});

describe('the workspace error handler, which runs as the admin who set it', () => {
  it("is not handed a $var: or $res: reference from a member's failed run to resolve as that admin", async () => {
    await createScript(s, 'f/open/on_error', 'bun', 'export function main(path: string, error: unknown) { console.log(path, JSON.stringify(error)); return { path, error }; }');
    expect((await s.post(`${ws()}/workspaces/edit_error_handler`, { path: 'f/open/on_error' })).status).toBe(200);
    // The developer's flow fails, and its failure module answers what the handler gets as `error`.
    const value = {
      modules: [{ id: 'a', value: { type: 'rawscript', language: 'bun', input_transforms: {}, content: 'export function main() { throw new Error("$var:f/vault/key"); }' } }],
      failure_module: { id: 'failure', value: { type: 'rawscript', language: 'bun', input_transforms: {}, content: 'export function main() { return "$var:f/vault/key"; }' } },
    };
    expect((await as('dev', `${ws()}/flows/create`, json({ path: 'u/dev/fails', value }))).status).toBe(201);
    await createScript(s, 'u/dev/throws', 'bun', 'export function main() { throw new Error("$var:f/vault/key"); }');
    const failed = [
      await (await as('dev', `${ws()}/jobs/run/p/u/dev/fails`, json({}))).text(),
      await (await as('dev', `${ws()}/jobs/run/p/u/dev/throws`, json({}))).text(),
    ];
    for (const id of failed) expect((await waitForJob(s, id)).status).toBe('failed');
    // The handler's runs, as the developer may read them (f/open is readable by every member).
    const handled: Array<Record<string, any>> = [];
    for (const deadline = Date.now() + 30_000; handled.length < failed.length; await new Promise((r) => setTimeout(r, 100))) {
      const runs = await (await as('dev', `${ws()}/jobs/list?script_path_exact=f/open/on_error`)).json();
      handled.splice(0, handled.length, ...(await Promise.all(runs.filter((j: { status: string }) => ['success', 'failed'].includes(j.status)).map(async (j: { id: string }) => (await as('dev', `${ws()}/jobs_u/get/${j.id}`)).json()))));
      if (Date.now() > deadline) throw new Error(`handler runs: ${JSON.stringify(handled)}`);
    }
    for (const job of handled) {
      expect(JSON.stringify(job)).not.toContain(SECRET);
      expect(job.status, JSON.stringify(job)).toBe('success');
    }
    const flowHandled = handled.find((j) => j.result.path === 'u/dev/fails')!;
    expect(flowHandled.result.error).toMatchObject({ name: 'ReferenceLeftOut' });
    // Its extra arguments (a webhook URL with its key, say) are shown to admins only, as the events webhook's URL is.
    expect((await s.post(`${ws()}/workspaces/edit_error_handler`, { path: 'f/open/on_error', extra_args: { hook: 'https://hooks.example.com/T0/B0/key' } })).status).toBe(200);
    expect((await (await as('dev', `${ws()}/workspaces/get_settings`)).json()).error_handler).toEqual({ path: 'f/open/on_error', extra_args: {} });
    expect((await (await s.fetch(`${ws()}/workspaces/get_settings`)).json()).error_handler.extra_args).toEqual({ hook: 'https://hooks.example.com/T0/B0/key' });
    expect((await s.post(`${ws()}/workspaces/edit_error_handler`, { path: null })).status).toBe(200);
  });
});

describe("an item's console page", () => {
  it("answers a flow one may not read exactly as a path that holds nothing (it told 'flows' from 'scripts')", async () => {
    expect((await s.post(`${ws()}/flows/create`, { path: 'f/vault/rotate', value: { modules: [] } })).status).toBe(201);
    const page = async (path: string) => {
      const res = await s.fetch(`/w/${s.workspace}/item/${path}`, { token: null, headers: { cookie: people.dev.cookie } });
      return { status: res.status, text: (await res.text()).replaceAll(path, '<path>') };
    };
    const flow = await page('f/vault/rotate');
    const nothing = await page('f/vault/nothing');
    expect(flow.status).toBe(403);
    expect(flow).toEqual(nothing);
  });
});

describe('a route whose URL is taken', () => {
  it("is a 409 that names the route holding it only to a caller who may read that route", async () => {
    await createScript(s, 'f/vault/hook', 'bun', 'export function main() { return 1; }');
    expect((await s.post(`${ws()}/http_triggers/create`, { path: 'f/vault/hook', route_path: 'vaulthook', http_method: 'post', script_path: 'f/vault/hook', authentication_method: 'svc' })).status).toBe(201);
    await createScript(s, 'u/dev/hook', 'bun', 'export function main() { return 2; }');
    const clash = await as('dev', `${ws()}/http_triggers/create`, json({ path: 'u/dev/hook', route_path: 'vaulthook', http_method: 'post', script_path: 'u/dev/hook', authentication_method: 'svc' }));
    const text = await clash.text();
    expect(clash.status, text).toBe(409);
    expect(text).not.toContain('f/vault');
    expect(JSON.parse(text).error.message).toContain('another route');
    // The admin, who may read it, is told which.
    const own = await s.post(`${ws()}/http_triggers/create`, { path: 'u/admin/hook', route_path: 'vaulthook', http_method: 'post', script_path: 'f/vault/hook', authentication_method: 'svc' });
    expect(await own.text()).toContain('f/vault/hook');
  });
});

describe("a job's own token in its logs", () => {
  it("is redacted, so a member who may read the run cannot act as its creator while it runs", async () => {
    // An admin's job that dumps its environment (a common debugging line), in a folder every member reads.
    await createScript(s, 'f/open/debug_env', 'bun', 'export async function main() { console.log(JSON.stringify(process.env)); await new Promise((r) => setTimeout(r, 4000)); return "done"; }');
    const id = await (await s.fetch(`${ws()}/jobs/run/p/f/open/debug_env`, json({}))).text();
    let logs = '';
    for (const deadline = Date.now() + 20_000; !logs.includes('OV_JOB_ID'); await new Promise((r) => setTimeout(r, 100))) {
      logs = (await (await as('dev', `${ws()}/jobs_u/getupdate/${id}`)).json()).new_logs ?? '';
      if (Date.now() > deadline) throw new Error(`no logs yet: ${logs}`);
    }
    const env = JSON.parse(logs.trim().split('\n').find((l) => l.includes('OV_JOB_ID'))!);
    expect(env.OV_TOKEN).toBe('[redacted: this job\'s token]');
    expect(env.WM_TOKEN).toBe('[redacted: this job\'s token]');
    const done = await waitForJob(s, id);
    expect(done.logs).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
  });
});

describe('a resource type', () => {
  it('is deleted by workspace admins only (as in Windmill): a developer cannot take the type every connection of it needs', async () => {
    expect((await s.post(`${ws()}/resources/type/create`, { name: 'shared_api', schema: { type: 'object' } })).status).toBe(201);
    expect((await s.post(`${ws()}/resources/create`, { path: 'f/vault/api', resource_type: 'shared_api', value: { key: 'k' } })).status).toBe(201);
    const refused = await as('dev', `${ws()}/resources/type/delete/shared_api`, { method: 'DELETE' });
    expect(refused.status, await refused.clone().text()).toBe(403);
    expect((await refused.json()).error.message).toContain('only workspace admins');
    expect((await s.fetch(`${ws()}/resources/type/get/shared_api`)).status).toBe(200);
    expect((await s.fetch(`${ws()}/resources/type/delete/shared_api`, { method: 'DELETE' })).status).toBe(200);
  });
});

describe("a webhook caller's ?token=", () => {
  it('is never passed to the job as an argument, where every reader of its runs would find a working token', async () => {
    const res = await s.fetch(`${ws()}/jobs/run/p/u/admin/echo?token=${s.token}&include_query=token,x&x=1`, { method: 'POST', token: null });
    const text = await res.text();
    expect(res.status, text).toBe(400);
    expect(JSON.parse(text).error).toMatchObject({ code: 'credential_header' });
    expect(text).not.toContain(s.token);
  });
});

describe('a pending invitation', () => {
  it('is spent when its user is added directly, so a removed member cannot accept it to come back (as an admin)', async () => {
    const eve = await person('eve', 'operator');
    // The admin had invited eve as an admin, then added her as an operator instead (the invitation stayed pending).
    expect((await s.post(`${ws()}/workspaces/remove_user`, { username: 'eve' })).status).toBe(200);
    expect((await s.post(`${ws()}/workspaces/invite_user`, { username: 'eve', role: 'admin' })).status).toBe(201);
    expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'eve', role: 'operator' })).status).toBe(201);
    expect((await s.post(`${ws()}/workspaces/remove_user`, { username: 'eve' })).status).toBe(200);
    const accepted = await s.fetch('/api/users/accept_invite', { ...json({ workspace_id: s.workspace }), token: eve.token });
    expect(accepted.status, await accepted.clone().text()).toBe(404);
    expect((await s.fetch(`${ws()}/variables/list`, { token: eve.token })).status).toBe(403);
  });
});

describe('a stream that lasts minutes', () => {
  /** Reads the stream until it ends, or until `ms` pass: whether it ended. */
  async function endsWithin(res: Response, ms: number): Promise<boolean> {
    const reader = res.body!.getReader();
    const deadline = Date.now() + ms;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) {
        await reader.cancel();
        return false;
      }
      const chunk = await Promise.race([reader.read(), new Promise<'late'>((r) => setTimeout(() => r('late'), left))]);
      if (chunk === 'late') continue;
      if (chunk.done) return true;
    }
  }
  const tokenOfDev = async (label: string) => {
    const res = await as('dev', '/api/users/tokens/create', json({ label }));
    return { token: await res.text(), prefix: async () => (await (await as('dev', '/api/users/tokens/list')).json()).find((t: { label: string }) => t.label === label).token_prefix };
  };

  it('stops once its token is deleted: the run list feed (with every run\'s arguments) does not go on for 10 minutes', async () => {
    const t = await tokenOfDev('feed');
    const res = await s.fetch(`${ws()}/jobs/runs_sse`, { token: t.token });
    expect(res.status).toBe(200);
    expect((await as('dev', `/api/users/tokens/delete/${await t.prefix()}`, { method: 'DELETE' })).status).toBe(200);
    expect(await endsWithin(res, 8000)).toBe(true);
  });

  it("stops once its token is deleted: a job's updates (and logs) do not go on while the job runs", async () => {
    await createScript(s, 'u/dev/slow', 'bun', 'export async function main() { for (let i = 0; i < 40; i++) { console.log("tick", i); await new Promise((r) => setTimeout(r, 250)); } }');
    const id = await (await as('dev', `${ws()}/jobs/run/p/u/dev/slow`, json({}))).text();
    const t = await tokenOfDev('follow');
    const res = await s.fetch(`${ws()}/jobs_u/getupdate_sse/${id}`, { token: t.token });
    expect(res.status).toBe(200);
    expect((await as('dev', `/api/users/tokens/delete/${await t.prefix()}`, { method: 'DELETE' })).status).toBe(200);
    expect(await endsWithin(res, 5000)).toBe(true);
    await as('dev', `${ws()}/jobs_u/queue/cancel/${id}`, json({}));
  });
});

describe('what held', () => {
  it("a developer without rights on a folder reads none of its secrets, by any route, and does not see them listed", async () => {
    for (const p of [
      `${ws()}/variables/get/f/vault/key`,
      `${ws()}/variables/get_value/f/vault/key`,
      `${ws()}/variables/exists/f/vault/key`,
      `${ws()}/variables/get/u/admin/db_password?encrypted=true`,
    ]) {
      const res = await as('dev', p);
      expect(res.status, p).toBe(403);
    }
    const list = await (await as('dev', `${ws()}/variables/list`)).json();
    expect(JSON.stringify(list)).not.toContain('vault');
  });

  it('a developer or operator without rights on a folder reads nothing of it by any route, and changes nothing', async () => {
    await createScript(s, 'f/vault/rotate_keys', 'bun', 'export function main(k: string) { return k.length; }');
    expect((await s.post(`${ws()}/resources/type/create`, { name: 'vault_conn', schema: { type: 'object' } })).status).toBe(201);
    expect((await s.post(`${ws()}/resources/create`, { path: 'f/vault/conn', resource_type: 'vault_conn', value: { password: '$var:f/vault/key' } })).status).toBe(201);
    const hash = await (await s.fetch(`${ws()}/scripts/get/p/f/vault/rotate_keys`)).json().then((v: { hash: string }) => v.hash);
    const adminRun = await (await s.fetch(`${ws()}/jobs/run/p/f/vault/rotate_keys`, json({ k: '$var:f/vault/key' }))).text();
    await waitForJob(s, adminRun);
    for (const who of ['dev', 'op']) {
      for (const p of [
        `${ws()}/scripts/get/p/f/vault/rotate_keys`,
        `${ws()}/scripts/get/h/${hash}`,
        `${ws()}/scripts/history/p/f/vault/rotate_keys`,
        `${ws()}/resources/get/f/vault/conn`,
        `${ws()}/resources/get_value_interpolated/f/vault/conn`,
        `${ws()}/resources/exists/f/vault/conn`,
        `${ws()}/variables/get/f/vault/key?encrypted=true`,
        `${ws()}/jobs_u/get/${adminRun}`,
        `${ws()}/jobs_u/getupdate/${adminRun}`,
        `${ws()}/jobs_u/completed/get_result/${adminRun}`,
        `${ws()}/jobs_u/completed/get_result_maybe/${adminRun}`,
        `${ws()}/folders/get/vault`,
      ]) {
        const res = await as(who, p);
        const text = await res.text();
        expect([403, 404], `${who} ${p}: ${text}`).toContain(res.status);
        expect(text).not.toContain(SECRET);
      }
      for (const p of [`${ws()}/scripts/list`, `${ws()}/resources/list`, `${ws()}/variables/list`, `${ws()}/jobs/list`, `${ws()}/jobs/runs?path=f/vault`, `${ws()}/folders/list`]) {
        const text = await (await as(who, p)).text();
        const body = JSON.parse(text);
        const items: Array<Record<string, unknown>> = Array.isArray(body) ? body : body.runs;
        const named = items.map((i) => String(i.path ?? i.script_path ?? i.name));
        expect(named.filter((n) => n.startsWith('f/vault') || n === 'vault'), `${who} ${p}`).toEqual([]);
        expect(text).not.toContain(SECRET);
      }
      const generated = await as(who, `${ws()}/openapi/generate`, json({}));
      expect(await generated.text()).not.toContain('vault');
      for (const [p, body] of [
        ['variables/update/f/vault/key', { value: 'mine' }],
        ['resources/update/f/vault/conn', { value: { password: 'mine' } }],
        ['resources/update_value/f/vault/conn', { value: { password: 'mine' } }],
        ['folders/update/vault', { extra_perms: { [`u/${who}`]: true } }],
        ['groups/adduser/admins', { username: who }],
        [`users/update/${who}`, { role: 'admin' }],
        ['workspaces/add_user', { username: who, role: 'admin' }],
        ['workspaces/invite_user', { username: who, role: 'admin' }],
        ['schedules/create', { path: `u/${who}/steal`, schedule: '0 0 0 * * *', script_path: 'f/vault/rotate_keys', args: { k: '$var:f/vault/key' } }],
        ['http_triggers/create', { path: `u/${who}/steal`, route_path: `steal_${who}`, http_method: 'post', script_path: 'f/vault/rotate_keys', authentication_method: 'none' }],
        ['jobs/run/p/f/vault/rotate_keys', { k: 'x' }],
        [`jobs/run/h/${hash}`, { k: 'x' }],
        ['workspaces/edit_error_handler', { path: 'f/vault/rotate_keys' }],
      ] as const) {
        const res = await as(who, `${ws()}/${p}`, json(body));
        expect([400, 403, 404], `${who} ${p}: ${await res.clone().text()}`).toContain(res.status);
      }
    }
    expect((await (await s.fetch(`${ws()}/variables/get/f/vault/key`)).json()).value).toBe(SECRET);
  });

  it("a token limited by scope or workspace does nothing else, and a removed member's token nothing at all", async () => {
    const mint = async (body: Record<string, unknown>) => (await as('dev', '/api/users/tokens/create', json({ label: 'narrow', ...body }))).text();
    const runOnly = await mint({ scopes: ['jobs:run:u/dev/tok'] });
    expect((await s.fetch(`${ws()}/variables/get/u/dev/mine`, { token: runOnly })).status).toBe(403);
    expect((await s.fetch(`${ws()}/scripts/list`, { token: runOnly })).status).toBe(403);
    expect((await s.fetch('/api/users/tokens/create', { ...json({ label: 'wider' }), token: runOnly })).status).toBe(403);
    expect((await s.fetch('/api/auth/login', { ...json({ token: runOnly }), token: null })).status).toBe(403);
    // Its job acts with the token's scopes: its own token cannot read the variable either.
    await createScript(s, 'u/dev/reader', 'bun', 'import * as svc from "svc-client";\nexport async function main() { return await svc.getVariable("u/dev/mine"); }');
    const readerOnly = await mint({ scopes: ['jobs:run:u/dev/reader'] });
    const run = await s.fetch(`${ws()}/jobs/run_wait_result/p/u/dev/reader`, { ...json({}), token: readerOnly });
    expect(await run.text()).not.toContain('dev-value');
    expect((await s.post('/api/workspaces/create', { id: 'other', name: 'Other' })).status).toBe(201);
    expect((await s.post('/api/w/other/workspaces/add_user', { username: 'dev', role: 'admin' })).status).toBe(201);
    const mainOnly = await mint({ workspace_id: s.workspace });
    expect((await s.fetch('/api/w/other/variables/list', { token: mainOnly })).status).toBe(403);
    expect((await s.fetch(`${ws()}/variables/list`, { token: mainOnly })).status).toBe(200);
    const kept = await person('fred', 'developer');
    expect((await s.post(`${ws()}/workspaces/remove_user`, { username: 'fred' })).status).toBe(200);
    expect((await s.fetch(`${ws()}/scripts/list`, { token: kept.token })).status).toBe(403);
    expect((await s.fetch(`/w/${s.workspace}/runs`, { token: null, headers: { cookie: kept.cookie } })).status).toBe(403);
  });

  it("a job's token stops working when its job ends", async () => {
    await createScript(s, 'u/dev/tok', 'bun', 'export function main() { return process.env.OV_TOKEN ?? process.env.WM_TOKEN; }', {});
    const id = await (await as('dev', `${ws()}/jobs/run/p/u/dev/tok`, json({}))).text();
    const job = await waitForJob(s, id);
    expect(job.status, JSON.stringify(job)).toBe('success');
    const token = job.result as string;
    const res = await s.fetch(`${ws()}/jobs_u/get/${id}`, { token });
    expect(res.status).toBe(401);
  });
});
