import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

/**
 * A flow's expressions are user code run as the flow's run-as user, and the sandbox that
 * evaluates them is that identity's alone: a warm evaluator keeps its state between one user's
 * flows (what makes it warm), and another member of the same workspace never lands in it, so
 * nothing one user's expression leaves behind (here a value on its global object, standing for any
 * of a flow's data) is within reach of the other's.
 */

let s: TestServer;
let alice: string;
let bob: string;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function member(username: string): Promise<string> {
  expect((await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` })).status).toBe(201);
  expect((await s.post(`${ws()}/workspaces/add_user`, { username, role: 'developer' })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const res = await s.fetch('/api/users/tokens/create', { ...json({ label: username }), token: null, headers: { cookie, 'content-type': 'application/json' } });
  expect(res.status).toBe(201);
  return res.text();
}

/** A flow whose one step gets what its expression finds: the first secret its evaluator saw. */
async function rememberingFlow(path: string, token: string): Promise<void> {
  const step = {
    id: 'a',
    value: {
      type: 'rawscript',
      language: 'bun',
      content: 'export async function main(seen: string) { return seen }',
      input_transforms: { seen: { type: 'javascript', expr: '(globalThis.__firstSecret ??= flow_input.secret)' } },
    },
  };
  const res = await s.fetch(`${ws()}/flows/create`, { ...json({ path, value: { modules: [step] } }), token });
  expect(res.status, await res.clone().text()).toBe(201);
}

const run = async (path: string, token: string, secret: string) => (await s.fetch(`${ws()}/jobs/run_wait_result/f/${path}`, { ...json({ secret }), token })).json();

beforeAll(async () => {
  s = await startServer();
  alice = await member('alice');
  bob = await member('bob');
  await rememberingFlow('u/alice/remember', alice);
  await rememberingFlow('u/bob/remember', bob);
}, 120_000);
afterAll(() => s?.stop());

describe("flow expressions of two members of one workspace", () => {
  it("run in evaluators of their own: bob's expression never sees what alice's left behind", async () => {
    expect(await run('u/alice/remember', alice, 'alice-1')).toBe('alice-1');
    // The same identity's evaluator stays warm: alice's next flow finds her first value.
    expect(await run('u/alice/remember', alice, 'alice-2')).toBe('alice-1');
    expect(await run('u/bob/remember', bob, 'bob-1')).toBe('bob-1');
    expect(await run('u/bob/remember', bob, 'bob-2')).toBe('bob-1');
    expect(await run('u/alice/remember', alice, 'alice-3')).toBe('alice-1');
  });
});
