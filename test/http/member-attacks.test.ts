import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * A hostile member of the workspace (a developer without admin rights) going after what others
 * keep there, by ways the rights on paths do not see at first glance.
 */

let s: TestServer;
let mallory: string;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

beforeAll(async () => {
  s = await startServer();
  expect((await s.post('/api/users/create', { username: 'mallory', email: 'mallory@example.com', password: 'mallory-password' })).status).toBe(201);
  expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'mallory', role: 'developer' })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { ...json({ email: 'mallory@example.com', password: 'mallory-password' }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const res = await s.fetch('/api/users/tokens/create', { ...json({ label: 'mallory' }), token: null, headers: { cookie, 'content-type': 'application/json' } });
  expect(res.status).toBe(201);
  mallory = await res.text();
});
afterAll(() => s?.stop());

describe('a folder deleted with items still in it', () => {
  it('is refused, so a developer who creates a folder of the same name next does not own what it held', async () => {
    expect((await s.post(`${ws()}/folders/create`, { name: 'vault' })).status).toBe(201);
    expect((await s.post(`${ws()}/variables/create`, { path: 'f/vault/db_password', value: 'hunter2-vault', is_secret: true })).status).toBe(201);
    await createScript(s, 'f/vault/rotate', 'bun', 'export function main() { return "rotated"; }');

    // Before: the folder went, its items stayed, and the next folder of that name took them over.
    const del = await s.fetch(`${ws()}/folders/delete/vault`, { method: 'DELETE' });
    expect(del.status).toBe(409);
    const error = (await del.json()).error;
    expect(error.code).toBe('conflict');
    expect(error.message).toContain('f/vault/db_password');
    expect(error.message).toContain('f/vault/rotate');
    // Nothing changed: the folder is still there, and still not mallory's to take.
    expect((await s.fetch(`${ws()}/folders/get/vault`)).status).toBe(200);
    expect((await s.fetch(`${ws()}/folders/create`, { ...json({ name: 'vault' }), token: mallory })).status).toBe(403);
    expect((await s.fetch(`${ws()}/variables/get_value/f/vault/db_password`, { token: mallory })).status).toBe(403);

    // Emptied, it may go; a folder created under the name then holds nothing of the old one.
    expect((await s.fetch(`${ws()}/variables/delete/f/vault/db_password`, { method: 'DELETE' })).status).toBe(200);
    expect((await s.post(`${ws()}/scripts/delete/p/f/vault/rotate`, {})).status).toBe(200);
    expect((await s.fetch(`${ws()}/folders/delete/vault`, { method: 'DELETE' })).status).toBe(200);
    expect((await s.fetch(`${ws()}/folders/create`, { ...json({ name: 'vault' }), token: mallory })).status).toBe(201);
    expect((await s.fetch(`${ws()}/variables/get_value/f/vault/db_password`, { token: mallory })).status).toBe(404);
  });

  it("is not handed, with the runs of its scripts, to a developer who creates a folder of that name after it went", async () => {
    expect((await s.post(`${ws()}/folders/create`, { name: 'payroll' })).status).toBe(201);
    await createScript(s, 'f/payroll/pay', 'bun', 'export function main(iban: string) { return `paid to ${iban}`; }');
    expect(await (await s.post(`${ws()}/jobs/run_wait_result/p/f/payroll/pay`, { iban: 'DE89-SECRET-IBAN' })).json()).toBe('paid to DE89-SECRET-IBAN');
    expect((await s.post(`${ws()}/scripts/delete/p/f/payroll/pay`, {})).status).toBe(200);
    expect((await s.fetch(`${ws()}/folders/delete/payroll`, { method: 'DELETE' })).status).toBe(200);

    // Before: mallory owned the new folder and read the old runs' arguments, results and logs.
    const taken = await s.fetch(`${ws()}/folders/create`, { ...json({ name: 'payroll' }), token: mallory });
    expect(taken.status).toBe(403);
    expect((await taken.json()).error.message).toContain('workspace admin');
    const runs = await (await s.fetch(`${ws()}/jobs/runs?path=f/payroll/`, { token: mallory })).json();
    expect(runs.runs).toEqual([]);
    // A workspace admin, who reads them anyway, may create it again.
    expect((await s.post(`${ws()}/folders/create`, { name: 'payroll' })).status).toBe(201);
  });

  it('answers a folder that does not exist as before, whatever paths under its name hold', async () => {
    const res = await s.fetch(`${ws()}/folders/delete/nowhere`, { method: 'DELETE', token: mallory });
    expect(res.status).toBe(404);
  });
});

describe('a JSON Schema pattern built to backtrack (ReDoS)', () => {
  /**
   * ^(a+)+$ against this takes the backtracking engine about 2^30 steps: seconds during which the
   * process answers nobody, each `a` more doubling it (40 are hours). Short enough that a service
   * without the fix is only blocked for a while, not left spinning after the test.
   */
  const evil = `${'a'.repeat(30)}!`;
  /** An ordinary 400 takes milliseconds; the backtracking took seconds. */
  const QUICK_MS = 1_000;

  it("is checked in linear time in a resource type's schema, so the service keeps answering", async () => {
    const type = { name: 'evil_type', schema: { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } } } };
    expect((await s.fetch(`${ws()}/resources/type/create`, { ...json(type), token: mallory })).status).toBe(201);
    const started = Date.now();
    const res = await s.fetch(`${ws()}/resources/create`, { ...json({ path: 'u/mallory/evil', resource_type: 'evil_type', value: { a: evil } }), token: mallory, signal: AbortSignal.timeout(80_000) });
    expect(Date.now() - started).toBeLessThan(QUICK_MS);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'invalid_resource', field: 'value.a' });
    // The pattern still applies.
    expect((await s.fetch(`${ws()}/resources/create`, { ...json({ path: 'u/mallory/fine', resource_type: 'evil_type', value: { a: 'aaa' } }), token: mallory })).status).toBe(201);
  });

  it("is checked in linear time in a flow's input schema", async () => {
    const flow = { path: 'u/mallory/evil_flow', schema: { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } }, required: [] }, value: { modules: [] } };
    expect((await s.fetch(`${ws()}/flows/create`, { ...json(flow), token: mallory })).status).toBe(201);
    const started = Date.now();
    const res = await s.fetch(`${ws()}/jobs/run/f/u/mallory/evil_flow`, { ...json({ a: evil }), token: mallory, signal: AbortSignal.timeout(80_000) });
    expect(Date.now() - started).toBeLessThan(QUICK_MS);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'invalid_input', field: 'a' });
  });

  it('is refused when it cannot run in linear time (look-arounds, back-references) or hides where values are not followed, creating nothing', async () => {
    const schemas = [
      { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+(?=b)' } } },
      { type: 'object', properties: { a: { type: 'string', pattern: ['^(a+)+$'] } } },
      { type: 'object', properties: { a: { anyOf: [{ type: 'string', pattern: '^(a+)+$' }] } } },
      { type: 'object', patternProperties: { '^(a+)+$': { type: 'string' } } },
    ];
    for (const [i, schema] of schemas.entries()) {
      const res = await s.fetch(`${ws()}/resources/type/create`, { ...json({ name: `refused_${i}`, schema }), token: mallory });
      expect(res.status, JSON.stringify(schema)).toBe(400);
      expect((await res.json()).error.field).toBe('schema');
      const flow = await s.fetch(`${ws()}/flows/create`, { ...json({ path: `u/mallory/refused_${i}`, schema: { ...schema, required: [] }, value: { modules: [] } }), token: mallory });
      expect(flow.status, JSON.stringify(schema)).toBe(400);
    }
    const types = ((await (await s.fetch(`${ws()}/resources/type/list`, { token: mallory })).json()) as { name: string }[]).map((t) => t.name);
    expect(types.filter((n) => n.startsWith('refused_'))).toEqual([]);
    expect((await s.fetch(`${ws()}/flows/get/u/mallory/refused_0`, { token: mallory })).status).toBe(404);
  });

  it("answers a schema that refers to itself without end with a 400, not a 500", async () => {
    expect((await s.fetch(`${ws()}/resources/type/create`, { ...json({ name: 'loop_type', schema: { $ref: '#' } }), token: mallory })).status).toBe(201);
    const res = await s.fetch(`${ws()}/resources/create`, { ...json({ path: 'u/mallory/loop', resource_type: 'loop_type', value: { a: 1 } }), token: mallory });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('invalid_resource');
    expect((await s.fetch(`${ws()}/resources/get/u/mallory/loop`, { token: mallory })).status).toBe(404);
  });
});

describe('input built to make a regular expression quadratic', () => {
  /** Each of these took the service seconds with the regular expressions they replace: about 30 s for the defaults, 26 s for the blanks, 28 s for the stack, 13 s for the slashes. */
  const QUICK_MS = 2_000;

  it("is read in linear time in a Python default of 200,000 backslashes", async () => {
    const content = `def main(x="${'\\'.repeat(200_000)}a"):\n    return x\n`;
    const started = Date.now();
    const res = await s.fetch(`${ws()}/scripts/infer_schema`, { ...json({ language: 'python3', content }), token: mallory });
    expect(Date.now() - started).toBeLessThan(QUICK_MS);
    expect(res.status).toBe(200);
    expect((await res.json()).properties.x).toMatchObject({ type: 'string', default: `${'\\'.repeat(100_000)}a` });
  });

  it("is read in linear time in a Python line of `from` and 200,000 blanks", async () => {
    const content = `from${' '.repeat(200_000)}x\ndef main():\n    return 1\n`;
    const started = Date.now();
    const res = await s.fetch(`${ws()}/scripts/create`, { ...json({ path: 'u/mallory/blanks', language: 'python3', content }), token: mallory });
    expect(Date.now() - started).toBeLessThan(QUICK_MS);
    expect(res.status).toBe(201);
  });

  it("is read in linear time in the stack of a job's error, 200,000 slashes long", async () => {
    await createScript(s, 'u/mallory/slash_stack', 'bun', 'export function main(n: number) { const e = new Error("boom"); e.stack = "/".repeat(n); throw e; }');
    const started = Date.now();
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/u/mallory/slash_stack`, { ...json({ n: 200_000 }), token: mallory });
    // The job itself (a warm or fresh bun process) takes a moment; the stack took the service 28 s.
    expect(Date.now() - started).toBeLessThan(8_000);
    expect((await res.json()).error).toMatchObject({ name: 'Error', message: 'boom' });
  });

  it('is refused in linear time as a route_path of 200,000 slashes, creating nothing', async () => {
    await createScript(s, 'u/mallory/echo', 'bun', 'export function main() { return 1; }');
    const route = { path: 'u/mallory/slashes', route_path: `a${'/'.repeat(200_000)}b`, http_method: 'post', script_path: 'u/mallory/echo' };
    const started = Date.now();
    const res = await s.fetch(`${ws()}/http_triggers/create`, { ...json(route), token: mallory });
    expect(Date.now() - started).toBeLessThan(QUICK_MS);
    expect(res.status).toBe(400);
    expect((await res.json()).error.field).toBe('route_path');
    expect((await s.fetch(`${ws()}/http_triggers/get/u/mallory/slashes`, { token: mallory })).status).toBe(404);
  });
});

describe('a secret that is not well-formed Unicode (a lone surrogate)', () => {
  const raw = (body: string, token?: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body, ...(token ? { token } : {}) });

  it('is refused with a 400 naming the field, not a 500, and changes nothing', async () => {
    const res = await s.fetch(`${ws()}/variables/create`, raw('{"path": "u/mallory/lone", "value": "ab\\ud800", "is_secret": true}', mallory));
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'invalid_request', field: 'value' });
    expect((await s.fetch(`${ws()}/variables/get/u/mallory/lone`, { token: mallory })).status).toBe(404);

    // A plain variable may hold one; made secret, it is refused the same way and stays as it was.
    expect((await s.fetch(`${ws()}/variables/create`, raw('{"path": "u/mallory/plain_lone", "value": "ab\\ud800"}', mallory))).status).toBe(201);
    const turned = await s.fetch(`${ws()}/variables/update/u/mallory/plain_lone`, raw('{"is_secret": true}', mallory));
    expect(turned.status).toBe(400);
    expect(await (await s.fetch(`${ws()}/variables/get/u/mallory/plain_lone`, { token: mallory })).json()).toMatchObject({ is_secret: false, value: 'ab\ud800' });

    const chat = await s.fetch(`${ws()}/workspaces/chat_connections/lone`, raw('{"platform": "slack", "bot_token": "xoxb-\\ud800", "signing_secret": "s"}'));
    expect(chat.status).toBe(400);
    expect((await chat.json()).error.field).toBe('bot_token');
    expect(await (await s.fetch(`${ws()}/workspaces/chat_connections`)).json()).toEqual([]);
  });
});

describe('a token scope whose glob is built to backtrack', () => {
  it('is matched in linear time against a long path, so the service keeps answering', async () => {
    const login = await s.fetch('/api/auth/login', { ...json({ email: 'mallory@example.com', password: 'mallory-password' }), token: null });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const created = await s.fetch('/api/users/tokens/create', { ...json({ label: 'glob', scopes: ['scripts:read:*a*a*a*a*a*a*a*a*a*a*b'] }), token: null, headers: { cookie, 'content-type': 'application/json' } });
    expect(created.status).toBe(201);
    const scoped = await created.text();
    // picomatch's expression took 24 s for these 40 characters (a minute for 50, and so on): short
    // enough that a service without the fix is only blocked for a while, not left spinning.
    const started = Date.now();
    const res = await s.fetch(`${ws()}/scripts/get/p/${'a'.repeat(40)}`, { token: scoped, signal: AbortSignal.timeout(80_000) });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(res.status).toBe(403);
    expect((await res.json()).error.message).toContain('this token does not allow');
    // The pattern still means what it says: a path it matches gets past the token, to the member's own rights.
    const matching = await s.fetch(`${ws()}/scripts/get/p/${'a'.repeat(10)}b`, { token: scoped });
    expect((await matching.json()).error.message).toContain('mallory (developer) may not read');
  });
});

describe("a script's source built to slow the highlighter down", () => {
  it('is shown on its item page as plain text, at once, still escaped', async () => {
    const line = `const x = "</code><script>alert(1)</script>"; const y = ${'funca'.repeat(16_000)};`;
    await createScript(s, 'u/mallory/slow_page', 'bun', `export function main() { return 1; }\n${line}\n`);
    const login = await s.fetch('/api/auth/login', { ...json({ email: 'mallory@example.com', password: 'mallory-password' }), token: null });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    // highlight.js took 14 s over this 80 KB line, during which the service answered nobody.
    const started = Date.now();
    const res = await s.fetch(`/w/${s.workspace}/item/u/mallory/slow_page`, { token: null, headers: { cookie }, signal: AbortSignal.timeout(80_000) });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(res.status).toBe(200);
    const code = (await res.text()).match(/<code id="source" class="hljs">([\s\S]*?)<\/code>/)![1];
    expect(code).toContain('&lt;/code&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(code).not.toContain('<span');
  });
});

describe("an approval step's description built against the markdown renderer", () => {
  it('is shown as plain text on the approval page, at once, instead of taking seconds or a 500', async () => {
    const ask = `import * as svc from 'svc-client';
export async function main() {
  return { ...(await svc.getResumeUrls()), description: { render_all: [{ markdown: '# Refund' }, { markdown: '**a['.repeat(10000) }, { markdown: '>'.repeat(10000) }] } };
}`;
    const flow = { path: 'u/mallory/slow_approval', value: { modules: [{ id: 'ask', value: { type: 'rawscript', language: 'bun', content: ask, input_transforms: {} }, suspend: { required_events: 1 } }] } };
    expect((await s.fetch(`${ws()}/flows/create`, { ...json(flow), token: mallory })).status).toBe(201);
    const id = await (await s.fetch(`${ws()}/jobs/run/f/u/mallory/slow_approval`, { ...json({}), token: mallory })).text();
    let job: { status: string; flow_status?: { results?: { ask?: { approvalPage: string } } } };
    const deadline = Date.now() + 30_000;
    do {
      await new Promise((r) => setTimeout(r, 100));
      job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`, { token: mallory })).json();
      expect(Date.now()).toBeLessThan(deadline);
    } while (job.status !== 'suspended');
    const page = job.flow_status!.results!.ask!.approvalPage.replace(/^https?:\/\/[^/]+/, '');
    // marked took 11 s over the first 40 KB, and overflowed its stack on the second (a 500).
    const started = Date.now();
    const res = await s.fetch(page, { token: null, signal: AbortSignal.timeout(80_000) });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('<h1>Refund</h1>');
    expect(text).toContain(`<pre class="text">${'**a['.repeat(10)}`);
    expect(text).toContain(`<pre class="text">${'&gt;'.repeat(10)}`);
  });
});
