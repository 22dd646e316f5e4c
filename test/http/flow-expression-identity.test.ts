import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

/**
 * A flow's expressions are user code run as the flow's run-as user, and the sandbox that
 * evaluates them is that identity's and that flow version's alone: a warm evaluator keeps its state
 * between runs of one user's flow (what makes it warm), and another member of the same workspace,
 * or another flow, never lands in it, so nothing one user's expression leaves behind (here a value
 * on its global object, standing for any of a flow's data) is within reach of the other's.
 */

let s: TestServer;
let alice: string;
let bob: string;
let mallory: string;
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

/** A flow whose one step returns what its one expression computes. */
async function flowOf(path: string, token: string, expr: string): Promise<void> {
  const step = { id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main(x: unknown) { return x }', input_transforms: { x: { type: 'javascript', expr } } } };
  const res = await s.fetch(`${ws()}/flows/create`, { ...json({ path, value: { modules: [step] } }), token });
  expect(res.status, await res.clone().text()).toBe(201);
}

// Mallory's expression patches Object.keys, which the evaluator calls on every scope it gets: it
// keeps a copy of the next flow's input and rewrites its `amount`.
const PLANT = `(() => {
  const keys = Object.keys;
  Object.keys = function (o) {
    if (o && o.flow_input && typeof o.flow_input.amount === 'number') {
      globalThis.__seen = JSON.stringify(o.flow_input);
      o.flow_input.amount = 666;
    }
    return keys(o);
  };
  return 'planted';
})()`;

beforeAll(async () => {
  s = await startServer();
  alice = await member('alice');
  bob = await member('bob');
  mallory = await member('mallory');
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

describe("flow expressions of two flows one member runs", () => {
  it("run in evaluators of their own: a shared flow's expression cannot read or rewrite the values of the member's own flows", async () => {
    // Mallory's flows, in a folder alice may run from; alice's own flow computes from its input.
    expect((await s.fetch(`${ws()}/folders/create`, { ...json({ name: 'shared', extra_perms: { 'u/alice': false } }), token: mallory })).status).toBe(201);
    await flowOf('f/shared/plant', mallory, PLANT);
    await flowOf('f/shared/harvest', mallory, 'String(globalThis.__seen)');
    await flowOf('u/alice/pay', alice, 'flow_input.amount * 1');
    const runFlow = async (path: string, args: unknown) => (await s.fetch(`${ws()}/jobs/run_wait_result/f/${path}`, { ...json(args), token: alice })).json();

    expect(await runFlow('u/alice/pay', { amount: 5 })).toBe(5);
    expect(await runFlow('f/shared/plant', {})).toBe('planted');
    // Before, alice's flow evaluated in the process mallory's expression had patched: 666.
    expect(await runFlow('u/alice/pay', { amount: 5, note: 'alice-private' })).toBe(5);
    // ...and mallory's next flow, run by alice, handed over what alice's flow had as its input.
    expect(await runFlow('f/shared/harvest', {})).toBe('undefined');
  });
});
