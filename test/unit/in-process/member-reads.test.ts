import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessService, json, type InProcessService } from './harness.js';
import type { Store } from '../../../functions/ports.js';

/**
 * What a person's own requests read follows their memberships, not the instance's workspaces:
 * `workspaces/list`, the consent endpoint (any signed-in person may POST it, so a read per
 * workspace made each request an amplifier), the approvals inbox and the person's invitations read as much with 50 more
 * workspaces the person is not in as without them. Reads are counted at the store: each call of
 * a read method, and each record a listing returns.
 */

let s: InProcessService;
let adaToken: string;
let adaCookie: string;
let finishedFlow: string;
let scriptJob: string;

beforeAll(async () => {
  s = await inProcessService();
  await s.post('/api/users/create', { username: 'ada', email: 'ada@example.com', password: 'ada-password' });
  await s.post('/api/w/main/workspaces/add_user', { username: 'ada', role: 'developer' });
  const login = await s.fetch('/api/auth/login', { ...json({ email: 'ada@example.com', password: 'ada-password' }), token: null });
  adaCookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  adaToken = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'reads' }), token: null, headers: { cookie: adaCookie, 'content-type': 'application/json' } })).text();

  const step = { id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1 }', input_transforms: {} } };
  expect((await s.post('/api/w/main/flows/create', { path: 'u/admin/plain', value: { modules: [step] } })).status).toBe(201);
  finishedFlow = await (await s.post('/api/w/main/jobs/run/p/u/admin/plain', {})).text();
  expect((await s.job(finishedFlow)).status).toBe('success');
  await s.post('/api/w/main/scripts/create', { path: 'u/admin/one', language: 'bun', content: 'export function main() { return 1 }' });
  scriptJob = await (await s.post('/api/w/main/jobs/run/p/u/admin/one', {})).text();
  expect((await s.job(scriptJob)).status).toBe('success');
});

const READS = /^(get|list|find|query|count)/;

/** Counts the store reads `fn` makes (restoring the store afterwards). */
async function readsOf(fn: () => Promise<unknown>): Promise<number> {
  const store = s.deps.store as Store & Record<string, unknown>;
  let reads = 0;
  const originals = new Map<string, unknown>();
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(store))) {
    const method = store[name];
    if (!READS.test(name) || typeof method !== 'function') continue;
    originals.set(name, method);
    store[name] = async (...args: unknown[]) => {
      const answer: unknown = await (method as (...a: unknown[]) => Promise<unknown>).apply(store, args);
      reads += 1 + (Array.isArray(answer) ? answer.length : 0);
      return answer;
    };
  }
  try {
    await fn();
    await s.settled();
  } finally {
    for (const name of originals.keys()) delete store[name];
  }
  return reads;
}

async function status(res: Promise<Response>): Promise<number> {
  const r = await res;
  await r.text();
  return r.status;
}

const requests = () => ({
  list: () => status(s.fetch('/api/workspaces/list', { token: adaToken })),
  unknownRun: () => status(s.fetch(`/api/v1/runs/${randomUUID()}/consent`, { ...json({ decision: 'approved' }), token: adaToken })),
  finishedRun: () => status(s.fetch(`/api/v1/runs/${finishedFlow}/consent`, { ...json({ decision: 'approved' }), token: adaToken })),
  notARun: () => status(s.fetch(`/api/v1/runs/${scriptJob}/consent`, { ...json({ decision: 'approved' }), token: adaToken })),
  inbox: () => status(s.fetch('/approvals', { token: null, headers: { cookie: adaCookie } })),
  invites: () => status(s.fetch('/api/users/list_invites', { token: adaToken })),
});

describe("a person's requests on an instance of many workspaces", () => {
  it('read as much with 50 workspaces the person is not in as without them, and answer the same', async () => {
    const measure = async () => {
      const out: Record<string, { status: number; reads: number }> = {};
      for (const [name, request] of Object.entries(requests())) {
        let answered = 0;
        const reads = await readsOf(async () => void (answered = await request()));
        out[name] = { status: answered, reads };
      }
      return out;
    };
    const before = await measure();
    expect(Object.fromEntries(Object.entries(before).map(([k, v]) => [k, v.status]))).toEqual({ list: 200, unknownRun: 404, finishedRun: 409, notARun: 404, inbox: 200, invites: 200 });

    for (let i = 0; i < 50; i++) expect((await s.post('/api/workspaces/create', { id: `other-${i}`, name: `Other ${i}` })).status).toBe(201);
    const after = await measure();
    expect(after).toEqual(before);
    const listed = (await (await s.fetch('/api/workspaces/list', { token: adaToken })).json()) as { id: string }[];
    expect(listed.map((w) => w.id)).toEqual(['main']);
    expect((await s.post('/api/w/other-7/workspaces/invite_user', { username: 'ada', role: 'operator' })).status).toBe(201);
    const invites = (await (await s.fetch('/api/users/list_invites', { token: adaToken })).json()) as { workspace_id: string; role: string }[];
    expect(invites).toMatchObject([{ workspace_id: 'other-7', role: 'operator' }]);
  });
});
