import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

/**
 * The routes whose callers prove their right themselves (signed resume, cancel and upload URLs,
 * chat callbacks) answer a workspace that does not exist exactly as one the caller may not use:
 * an outsider cannot find out which workspaces exist from them.
 */
let s: TestServer;

beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.stop());

const JOB = '01a223ba-1892-75e8-b35a-df32443c4092';
const probes: Array<[string, string, RequestInit]> = [
  ['resume POST', `jobs_u/resume/${JOB}/0/${'ab'.repeat(32)}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }],
  ['resume GET', `jobs_u/resume/${JOB}/0/${'ab'.repeat(32)}`, {}],
  ['cancel GET', `jobs_u/cancel/${JOB}/0/${'ab'.repeat(32)}`, {}],
  ['cancel POST', `jobs_u/cancel/${JOB}/0/${'ab'.repeat(32)}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }],
  ['upload part', `job_helpers/uploads/part?upload=x&part=1&expires=9999999999&signature=${'ab'.repeat(32)}`, { method: 'PUT', body: 'bytes' }],
  ['Slack callback', 'chat/slack/interactions', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-signature': `v0=${'ab'.repeat(32)}`, 'x-slack-request-timestamp': String(Math.floor(Date.now() / 1000)) }, body: 'payload=%7B%7D' }],
  ['Teams callback', 'chat/teams/messages', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer x.y.z' }, body: '{"type":"message"}' }],
];

/** An answer with the workspace's name replaced, so two workspaces' answers compare. */
async function answer(workspace: string, path: string, init: RequestInit) {
  const res = await s.fetch(`/api/w/${workspace}/${path}`, { ...init, token: null, redirect: 'manual' });
  return { status: res.status, body: (await res.text()).replaceAll(workspace, 'WS') };
}

describe('a workspace that does not exist, on routes that prove their right themselves', () => {
  it.each(probes)('%s answers as an existing workspace does', async (_name, path, init) => {
    const existing = await answer(s.workspace, path, init);
    expect(existing.status).toBeGreaterThanOrEqual(400);
    // Before: 404 "workspace nosuchws not found" where an existing workspace answered 403 or 401.
    expect(await answer('nosuchws', path, init)).toEqual(existing);
  });
});
