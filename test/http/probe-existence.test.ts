import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Attack (issue 30): a caller without rights must not learn what exists by the answers it gets.
 * Who asks is checked before what is asked about, so a thing the caller may not see answers exactly
 * like a thing that does not exist.
 */

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
let dave: string;
let carol: string;
let hash: string;
let flowVersion: number;
let appVersion: number;
let jobId: string;

/** A user's token; a member of the workspace with `role` when given. */
async function userToken(username: string, role: string | null): Promise<string> {
  expect((await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` })).status).toBe(201);
  if (role) expect((await s.post(`${ws()}/workspaces/add_user`, { username, role })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const res = await s.fetch('/api/users/tokens/create', { ...json({ label: username }), token: null, headers: { cookie, 'content-type': 'application/json' } });
  expect(res.status).toBe(201);
  return res.text();
}

/** Status, code and message, with the name probed for replaced so two answers compare. */
async function answer(res: Response, probed: string | number): Promise<unknown> {
  const body = await res.json();
  return { status: res.status, code: body.error?.code, message: String(body.error?.message).replaceAll(String(probed), '<probed>') };
}

beforeAll(async () => {
  s = await startServer();
  hash = await createScript(s, 'u/admin/secret', 'bun', 'export function main() { return "secret"; }');
  const flow = { path: 'u/admin/secret_flow', value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1; }', input_transforms: {} } }] } };
  expect((await s.post(`${ws()}/flows/create`, flow)).status).toBe(201);
  flowVersion = (await (await s.fetch(`${ws()}/flows/get/u/admin/secret_flow`)).json()).id;
  expect((await s.post(`${ws()}/apps/create`, { path: 'u/admin/secret_app', summary: 'x', value: { grid: [] } })).status).toBe(201);
  appVersion = (await (await s.fetch(`${ws()}/apps/get/p/u/admin/secret_app`)).json()).id;
  jobId = await (await s.post(`${ws()}/jobs/run/p/u/admin/secret`, {})).text();
  await waitForJob(s, jobId);
  dave = await userToken('dave', 'developer');
  carol = await userToken('carol', null);
});
afterAll(() => s?.stop());

describe('authorization before existence', () => {
  it("a workspace one is not a member of answers like one that does not exist", async () => {
    const existing = await s.fetch(`${ws()}/scripts/list`, { token: carol });
    const missing = await s.fetch('/api/w/no-such-ws/scripts/list', { token: carol });
    expect(existing.status).toBe(403);
    expect(await answer(missing, 'no-such-ws')).toEqual(await answer(existing, s.workspace));
  });

  it("a workspace's pages, to someone signed in who is not a member, answer like those of a workspace that does not exist", async () => {
    const login = await s.fetch('/api/auth/login', { ...json({ email: 'carol@example.com', password: 'carol-password' }), token: null });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    for (const page of ['settings', 'runs', 'openapi']) {
      const existing = await s.fetch(`/w/${s.workspace}/${page}`, { token: null, headers: { cookie }, redirect: 'manual' });
      const missing = await s.fetch(`/w/no-such-ws/${page}`, { token: null, headers: { cookie }, redirect: 'manual' });
      expect(existing.status, page).toBe(403);
      expect(await answer(missing, 'no-such-ws'), page).toEqual(await answer(existing, s.workspace));
    }
  });

  it('things named by id or hash that the caller may not see answer like unknown ones', async () => {
    const pairs: Array<[string, string, string | number, string | number]> = [
      [`${ws()}/scripts/get/h/${hash}`, `${ws()}/scripts/get/h/0123456789abcdef`, hash, '0123456789abcdef'],
      [`${ws()}/apps/get/v/${appVersion}`, `${ws()}/apps/get/v/987654`, appVersion, 987654],
      [`${ws()}/jobs_u/get/${jobId}`, `${ws()}/jobs_u/get/00000000-0000-4000-8000-000000000000`, jobId, '00000000-0000-4000-8000-000000000000'],
      [`${ws()}/jobs/resume_urls/${jobId}/1`, `${ws()}/jobs/resume_urls/00000000-0000-4000-8000-000000000000/1`, jobId, '00000000-0000-4000-8000-000000000000'],
    ];
    for (const [hidden, unknown, a, b] of pairs) {
      const seen = await s.fetch(hidden, { token: dave });
      expect(seen.status, hidden).toBe(404);
      expect(await answer(seen, a), hidden).toEqual(await answer(await s.fetch(unknown, { token: dave }), b));
    }
    const runHidden = await s.fetch(`${ws()}/jobs/run/fv/${flowVersion}`, { ...json({}), token: dave });
    const runUnknown = await s.fetch(`${ws()}/jobs/run/fv/987654`, { ...json({}), token: dave });
    expect(runHidden.status).toBe(404);
    expect(await answer(runHidden, flowVersion)).toEqual(await answer(runUnknown, 987654));
    const byHash = await s.fetch(`${ws()}/jobs/run/h/${hash}`, { ...json({}), token: dave });
    expect(await answer(byHash, hash)).toEqual(await answer(await s.fetch(`${ws()}/jobs/run/h/0123456789abcdef`, { ...json({}), token: dave }), '0123456789abcdef'));
  });

  it('an upload for a script the caller may not run is refused before the workspace settings are looked at', async () => {
    for (const path of ['u/admin/secret', 'u/admin/nothing_here']) {
      const res = await s.fetch(`${ws()}/job_helpers/uploads/create`, { ...json({ path, size: 10 }), token: dave });
      expect(res.status, path).toBe(403);
      expect((await res.json()).error.message).not.toContain('object storage');
    }
    // A caller who may run it is told about the setting.
    const own = await s.fetch(`${ws()}/job_helpers/uploads/create`, { ...json({ path: 'u/admin/secret', size: 10 }) });
    expect((await own.json()).error.code).toBe('object_storage_not_configured');
  });
});
