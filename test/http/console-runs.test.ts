import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * The console's run list API (issue 22) as a client uses it: GET jobs/runs with its filters and
 * cursor, the live feed jobs/runs_sse, and bulk cancel through jobs/queue/cancel_selection — each
 * under the same rights as the single-job routes, and every bad input a 400 that changes nothing.
 */

let s: TestServer;
let operator: string;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const runs = async (query: string, token?: string) => {
  const res = await s.fetch(`${ws()}/jobs/runs?${query}`, token ? { token } : {});
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { runs: { id: string; status: string; path: string; args: unknown; can_cancel: boolean; created_by: string }[]; next_cursor: string | null };
};
const start = async (path: string, args: unknown) => {
  const res = await s.fetch(`${ws()}/jobs/run/p/${path}`, json(args));
  expect(res.status).toBe(201);
  return res.text();
};

beforeAll(async () => {
  s = await startServer();
  expect((await s.post('/api/users/create', { username: 'opal', email: 'opal@example.com', password: 'opal-password' })).status).toBe(201);
  expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'opal', role: 'operator' })).status).toBe(201);
  const created = await s.fetch('/api/users/tokens/create', { ...json({ label: 'opal' }), token: null, headers: { 'content-type': 'application/json', cookie: await login('opal') } });
  operator = await created.text();
  expect((await s.post(`${ws()}/folders/create`, { name: 'pub', extra_perms: { 'u/opal': false } })).status).toBe(201);
  expect((await s.post(`${ws()}/folders/create`, { name: 'hidden' })).status).toBe(201);
  await createScript(s, 'f/pub/echo', 'bash', 'env="$1"\nn="$2"\necho "{\\"env\\": \\"$env\\", \\"n\\": $n}"', {
    schema: { type: 'object', properties: { env: { type: 'string' }, n: { type: 'integer' } }, required: ['env', 'n'] },
  });
  await createScript(s, 'f/hidden/echo', 'bash', 'echo 1', { schema: { type: 'object', properties: { env: { type: 'string' } }, required: [] } });
  await createScript(s, 'f/pub/sleep', 'bash', 'sleep 60', { schema: { type: 'object', properties: { n: { type: 'integer' } }, required: [] } });
});
afterAll(async () => {
  await s?.stop();
});

/** The first event of an SSE response, as an EventSource client would parse it. */
async function firstEvent(res: Response): Promise<EventSourceMessage> {
  let found: EventSourceMessage | undefined;
  const parser = createParser({ onEvent: (e) => (found ??= e) });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (found) return found;
  }
  throw new Error('the stream ended without an event');
}

async function login(username: string): Promise<string> {
  const res = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  return (res.headers.get('set-cookie') ?? '').split(';')[0];
}

describe('GET /api/w/{ws}/jobs/runs', () => {
  it('lists runs newest first, filtered by path prefix, status, user and a JSON subset of the arguments, page by page', async () => {
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) ids.push(await start('f/pub/echo', { env: n % 2 ? 'dev' : 'prod', n }));
    const hidden = await start('f/hidden/echo', { env: 'prod' });
    for (const id of [...ids, hidden]) expect((await waitForJob(s, id)).status).toBe('success');

    const all = await runs('path=f/pub/echo');
    expect(all.runs.map((r) => r.id)).toEqual([...ids].reverse());
    expect(all.runs[0]).toMatchObject({ path: 'f/pub/echo', status: 'success', args: { env: 'prod', n: 4 }, can_cancel: false });

    const prod = await runs(`path=f/&status=success&args=${encodeURIComponent('{"env":"prod"}')}`);
    expect(prod.runs.map((r) => r.id)).toEqual([hidden, ids[4], ids[2], ids[0]]);
    expect((await runs(`args=${encodeURIComponent('{"env":"prod","n":2}')}`)).runs.map((r) => r.id)).toEqual([ids[2]]);
    expect((await runs(`result=${encodeURIComponent('{"n":3}')}`)).runs.map((r) => r.id)).toEqual([ids[3]]);
    expect((await runs('user=nobody')).runs).toEqual([]);
    expect((await runs('folder=pub&path=f/hidden/')).runs).toEqual([]);

    // Two at a time: every run once, in order, then no cursor.
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 5; page++) {
      const got = await runs(`path=f/pub/echo&per_page=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...got.runs.map((r) => r.id));
      if (!got.next_cursor) break;
      cursor = got.next_cursor;
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('shows an operator only the runs of folders they may read, without cancel rights on them', async () => {
    const mine = await runs('per_page=200', operator);
    expect(mine.runs.length).toBeGreaterThan(0);
    expect(mine.runs.every((r) => r.path.startsWith('f/pub/'))).toBe(true);
    expect((await runs('path=f/hidden/', operator)).runs).toEqual([]);
  });

  it.each([
    ['status=done', 'status'],
    ['args=not-json', 'args'],
    ['args=%5B1%5D', 'args'],
    ['after=yesterday', 'after'],
    ['per_page=0', 'per_page'],
    ['cursor=%%%', 'cursor'],
    ['kind=job', 'kind'],
  ])('refuses %s with a 400 naming the field', async (query, field) => {
    const res = await s.fetch(`${ws()}/jobs/runs?${query}`);
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toContain(field);
  });

  it('sends the first page on the live feed', async () => {
    const id = await start('f/pub/echo', { env: 'feed', n: 9 });
    await waitForJob(s, id);
    const controller = new AbortController();
    const res = await s.fetch(`${ws()}/jobs/runs_sse?args=${encodeURIComponent('{"env":"feed"}')}`, { signal: controller.signal });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const first = await firstEvent(res);
    controller.abort();
    expect(first.event).toBe('runs');
    expect(JSON.parse(first.data).runs.map((r: { id: string }) => r.id)).toEqual([id]);
  });
});

describe('POST /api/w/{ws}/jobs/queue/cancel_selection', () => {
  it('cancels each run the caller may cancel and reports the others', async () => {
    const sleeping: string[] = [];
    for (let n = 0; n < 3; n++) sleeping.push(await start('f/pub/sleep', { n }));
    const done = await start('f/pub/echo', { env: 'x', n: 1 });
    await waitForJob(s, done);

    // The operator may read f/pub but not cancel others' runs there: nothing changes.
    const refused = await s.fetch(`${ws()}/jobs/queue/cancel_selection`, { ...json(sleeping), token: operator });
    expect(refused.status).toBe(200);
    expect(await refused.json()).toMatchObject({ canceled: [], not_canceled: sleeping.map((id) => ({ id, status: 403 })) });

    const res = await s.fetch(`${ws()}/jobs/queue/cancel_selection`, json({ ids: [...sleeping, done, 'no-such-job'], reason: 'bulk' }));
    expect(res.status).toBe(200);
    const outcome = await res.json();
    expect(outcome.canceled).toEqual(sleeping);
    expect(outcome.not_canceled).toEqual([expect.objectContaining({ id: done, status: 409 }), expect.objectContaining({ id: 'no-such-job', status: 404 })]);
    for (const id of sleeping) expect(await waitForJob(s, id)).toMatchObject({ status: 'canceled' });
    expect((await runs(`path=f/pub/sleep&status=canceled`)).runs.map((r) => r.id).sort()).toEqual([...sleeping].sort());
  });

  it('cancels every one of many selected runs, queued or running (issue 36)', async () => {
    await createScript(s, 'f/pub/nap', 'bash', 'n="$1"\nsleep 60', { schema: { type: 'object', properties: { n: { type: 'integer' } }, required: [] } });
    const ids: string[] = [];
    for (let n = 0; n < 60; n++) ids.push(await start('f/pub/nap', { n }));
    const res = await s.fetch(`${ws()}/jobs/queue/cancel_selection`, json(ids));
    expect(res.status).toBe(200);
    const outcome = await res.json();
    const why = await Promise.all(outcome.not_canceled.slice(0, 2).map(async (r: { id: string }) => JSON.stringify((await waitForJob(s, r.id)).result).slice(0, 400)));
    expect(outcome.not_canceled, why.join('\n')).toEqual([]);
    expect([...outcome.canceled].sort()).toEqual([...ids].sort());
    for (const id of ids) expect(await waitForJob(s, id)).toMatchObject({ status: 'canceled' });
    const listed = await runs(`path=f/pub/nap&per_page=200`);
    expect(listed.runs.map((r) => r.status)).toEqual(ids.map(() => 'canceled'));
  });

  it.each([
    ['an empty list', []],
    ['no ids', {}],
    ['ids that are not strings', [1, 2]],
    ['more than 1000 ids', Array.from({ length: 1001 }, (_, i) => `id-${i}`)],
  ])('refuses %s with a 400', async (_what, body) => {
    const res = await s.fetch(`${ws()}/jobs/queue/cancel_selection`, json(body));
    expect(res.status).toBe(400);
  });

  it('refuses a body that is not JSON', async () => {
    const res = await s.fetch(`${ws()}/jobs/queue/cancel_selection`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'a,b' });
    expect(res.status).toBe(415);
  });
});

describe('/api/w/{ws}/workspaces/retention', () => {
  it('is set by a workspace admin, read back, and refused to an operator or with a bad value', async () => {
    expect(await (await s.fetch(`${ws()}/workspaces/retention`)).json()).toEqual({ max_age_days: null });
    const set = await s.fetch(`${ws()}/workspaces/retention`, json({ max_age_days: 30 }));
    expect(set.status).toBe(200);
    expect(await (await s.fetch(`${ws()}/workspaces/retention`)).json()).toEqual({ max_age_days: 30 });
    for (const bad of [{ max_age_days: -1 }, { max_age_days: 'soon' }, { keep: 3 }]) {
      expect((await s.fetch(`${ws()}/workspaces/retention`, json(bad))).status).toBe(400);
    }
    expect((await s.fetch(`${ws()}/workspaces/retention`, { ...json({ max_age_days: 1 }), token: operator })).status).toBe(403);
    expect(await (await s.fetch(`${ws()}/workspaces/retention`)).json()).toEqual({ max_age_days: 30 });
  });
});

describe('/api/w/{ws}/workspaces/retention by count', () => {
  it('takes max_count beside max_age_days, a field left out keeping its value, and refuses a bad count', async () => {
    const set = await s.fetch(`${ws()}/workspaces/retention`, json({ max_count: 5000 }));
    expect(set.status, await set.clone().text()).toBe(200);
    expect(await set.json()).toEqual({ max_age_days: 30, max_count: 5000 });
    for (const bad of [{ max_count: 0 }, { max_count: 100_001 }, { max_count: 'many' }, {}]) {
      expect((await s.fetch(`${ws()}/workspaces/retention`, json(bad))).status, JSON.stringify(bad)).toBe(400);
    }
    expect(await (await s.fetch(`${ws()}/workspaces/retention`)).json()).toEqual({ max_age_days: 30, max_count: 5000 });
    expect((await s.fetch(`${ws()}/workspaces/retention`, json({ max_age_days: null, max_count: null }))).status).toBe(200);
    expect(await (await s.fetch(`${ws()}/workspaces/retention`)).json()).toEqual({ max_age_days: null });
  });
});

describe('console pages', () => {
  it('send a login-less visitor to the login page and come back', async () => {
    const res = await s.fetch(`/w/${s.workspace}/runs?status=failed`, { token: null, redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`/login?next=${encodeURIComponent('/w/' + s.workspace + '/runs?status=failed')}`);
    // A token in the URL opens no page.
    expect((await s.fetch(`/w/${s.workspace}/runs?token=${s.token}`, { token: null, redirect: 'manual' })).status).toBe(302);
  });

  it('carry a strict CSP allowing only their own script and style by hash', async () => {
    const cookie = await login('opal');
    for (const path of [`/w/${s.workspace}`, `/w/${s.workspace}/runs`, `/w/${s.workspace}/item/f/pub/echo`]) {
      const res = await s.fetch(path, { token: null, headers: { cookie } });
      expect(res.status, path).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      // Hash sources only: the page's own script and style, and on the runs page the chart library's.
      expect(csp, path).toMatch(/^default-src 'none'; script-src 'sha256-[^']+'( 'sha256-[^']+')?; style-src 'sha256-[^']+'( 'sha256-[^']+')?;/);
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).not.toContain('unsafe');
      expect(res.headers.get('cache-control'), path).toBe('no-store');
    }
    // The operator's curl examples carry a placeholder, never a token.
    const item = await (await s.fetch(`/w/${s.workspace}/item/f/pub/echo`, { token: null, headers: { cookie } })).text();
    expect(item).toContain('Bearer $SVC_TOKEN');
    expect(item).not.toContain(operator);
    // A folder closed to them is not found or refused, never shown.
    expect((await s.fetch(`/w/${s.workspace}/item/f/hidden/echo`, { token: null, headers: { cookie } })).status).toBe(403);
  });

  it("show on the workspace home each item's own last run, never that of a path it begins", async () => {
    // f/pub/b ran once and failed; f/pub/bc, whose path begins with f/pub/b, ran after it, more often than a page of runs.
    await createScript(s, 'f/pub/b', 'bash', 'exit 3');
    await createScript(s, 'f/pub/bc', 'bash', 'echo ok');
    await waitForJob(s, await start('f/pub/b', {}));
    for (let i = 0; i < 6; i++) await waitForJob(s, await start('f/pub/bc', {}));
    const home = await (await s.fetch(`/w/${s.workspace}`, { token: null, headers: { cookie: await login('opal') } })).text();
    const lastRun = (path: string) => home.match(new RegExp(`>${path}</a></td>.*?<td>(?:<span class="[^"]*">([a-z_]+)</span>)</td></tr>`))?.[1];
    expect(lastRun('f/pub/b')).toBe('failed');
    expect(lastRun('f/pub/bc')).toBe('success');
    // The run list's exact path filter, which the item page's recent runs read; `path` stays a prefix.
    expect((await runs('path_exact=f/pub/b')).runs.map((r) => r.path)).toEqual(['f/pub/b']);
    expect((await runs('path=f/pub/b&per_page=200')).runs.map((r) => r.path).filter((p) => p === 'f/pub/bc')).toHaveLength(6);
    expect((await runs('path_exact=f/pub/b&folder=hidden')).runs).toEqual([]);
  });

  it('answer what the person may not see or change, or what is not there, with one Not available page and the API\'s status', async () => {
    const cookie = await login('opal');
    const pages: [string, number, string][] = [
      [`/w/${s.workspace}/item/f/hidden/echo`, 403, 'f/hidden/echo'],
      [`/w/${s.workspace}/run/00000000-0000-4000-8000-000000000000`, 404, '00000000-0000-4000-8000-000000000000'],
      [`/w/${s.workspace}/scripts/new`, 403, 'You may not create scripts in this workspace.'],
      [`/w/${s.workspace}/flows/new`, 403, 'You may not create flows in this workspace.'],
    ];
    for (const [path, status, says] of pages) {
      const res = await s.fetch(path, { token: null, headers: { cookie } });
      expect(res.status, path).toBe(status);
      const page = await res.text();
      expect(page, path).toContain('<title>Not available — svc</title>');
      expect(page, path).toMatch(/<h1>Not available<\/h1><p>[^<]*<\/p>/);
      expect(page, path).toContain(says);
    }
  });
});
