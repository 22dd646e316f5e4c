import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * The item page (issue 22, item 4): a script's source highlighted on the server (classes, never
 * inline style, the source's own markup escaped) and its versions newest first; a flow's versions.
 */

let s: TestServer;
let cookie: string;
const page = async (path: string) => {
  const res = await s.fetch(`/w/${s.workspace}/item/${path}`, { token: null, headers: { cookie } });
  expect(res.status).toBe(200);
  return res.text();
};
const versionRows = (text: string) => [...text.matchAll(/<tr><td><code>([^<]+)<\/code><\/td><td>[^<]+<\/td><td>([^<]+)<\/td><td class="wide">([^<]*)<\/td><\/tr>/g)].map((m) => ({ id: m[1], by: m[2], message: m[3] }));

beforeAll(async () => {
  s = await startServer();
  expect((await s.post('/api/users/create', { username: 'ada', email: 'ada@example.com', password: 'ada-password' })).status).toBe(201);
  expect((await s.post(`/api/w/${s.workspace}/workspaces/add_user`, { username: 'ada', role: 'admin' })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ada@example.com', password: 'ada-password' }), token: null });
  cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
});
afterAll(async () => {
  await s?.stop();
});

describe('the item page', () => {
  it('shows a script source highlighted on the server and its versions, newest first', async () => {
    const v1 = await createScript(s, 'u/admin/hl_ts', 'bun', 'export function main(n: number) { return n; }', { summary: 'first' });
    const v2 = await createScript(s, 'u/admin/hl_ts', 'bun', '// doubles it\nexport function main(n: number): string { return "<b>" + (n * 2) + "</b>"; }', { parent_hash: v1, summary: 'second', deployment_message: 'double it' });
    const text = await page('u/admin/hl_ts');
    const code = text.match(/<code id="source" class="hljs">([\s\S]*?)<\/code>/)![1];
    expect(code).toContain('<span class="hljs-keyword">export</span>');
    expect(code).toContain('<span class="hljs-comment">// doubles it</span>');
    expect(code).toContain('<span class="hljs-string">&quot;&lt;b&gt;&quot;</span>');
    expect(code).not.toContain('<b>');
    expect(code).not.toMatch(/style=/);
    expect(versionRows(text)).toEqual([
      { id: v2, by: 'admin', message: 'double it' },
      { id: v1, by: 'admin', message: 'first' },
    ]);
  });

  // Go is in the unit test of the highlighter: the AWS shell builds no Go scripts.
  it('highlights Python and bash with their own grammars', async () => {
    const cases = [
      ['u/admin/hl_py', 'python3', 'def main(x: int):\n    return x  # same\n', '<span class="hljs-keyword">def</span>'],
      ['u/admin/hl_sh', 'bash', 'x="$1"\necho "$x"\n', '<span class="hljs-built_in">echo</span>'],
    ] as const;
    for (const [path, language, content, expected] of cases) {
      await createScript(s, path, language, content);
      expect(await page(path), language).toContain(expected);
    }
  });

  it('lists a flow\'s versions, newest first', async () => {
    const value = { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bash', content: 'echo 1', input_transforms: {} } }] };
    expect((await s.post(`/api/w/${s.workspace}/flows/create`, { path: 'u/admin/hl_flow', summary: 'one', value })).status).toBe(201);
    expect((await s.post(`/api/w/${s.workspace}/flows/update/u/admin/hl_flow`, { path: 'u/admin/hl_flow', summary: 'two', value })).status).toBe(200);
    const rows = versionRows(await page('u/admin/hl_flow'));
    expect(rows.map((r) => r.message)).toEqual(['two', 'one']);
    expect(Number(rows[0].id)).toBeGreaterThan(Number(rows[1].id));
  });

  it("shows a flow's steps on the page of a run that has not started yet", async () => {
    // One run at a time: the second waits for the first (which sleeps), so nothing has started it.
    const value = {
      concurrent_limit: 1,
      modules: [
        { id: 'nap', value: { type: 'rawscript', language: 'bash', content: 'sleep 30', input_transforms: {} } },
        { id: 'after', value: { type: 'rawscript', language: 'bash', content: 'echo 1', input_transforms: {} } },
      ],
    };
    expect((await s.post(`/api/w/${s.workspace}/flows/create`, { path: 'u/admin/one_at_a_time', value })).status).toBe(201);
    const start = async () => (await s.fetch(`/api/w/${s.workspace}/jobs/run/f/u/admin/one_at_a_time`, { method: 'POST', body: '{}' })).text();
    const first = await start();
    const waiting = await start();
    const res = await s.fetch(`/w/${s.workspace}/run/${waiting}`, { token: null, headers: { cookie } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('data-module="nap"');
    expect(text).toContain('data-module="after"');
    for (const id of [waiting, first]) expect((await s.post(`/api/w/${s.workspace}/jobs_u/queue/cancel/${id}`, {})).status).toBe(200);
  });
});
