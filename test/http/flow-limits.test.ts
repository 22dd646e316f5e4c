import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, waitForJob, type TestServer } from './harness.js';

/**
 * What a member's flow may make the service do at most (docs/flows.md), over real HTTP in both
 * shells: a flow that runs itself stops at the nesting limit, and a for loop over a longer list
 * than the instance allows fails before it starts any iteration.
 */

const LOOP_CAP = 3;
let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SVC_FLOW_MAX_LOOP_ITEMS: String(LOOP_CAP) } });
});
afterAll(() => s?.stop());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON view, read as a client reads it
type Json = Record<string, any>;
const ws = () => `/api/w/${s.workspace}`;
const js = (expr: string) => ({ type: 'javascript', expr });

async function createFlow(path: string, modules: unknown[]): Promise<void> {
  const res = await s.post(`${ws()}/flows/create`, { path, value: { modules } });
  expect(res.status, await res.clone().text()).toBe(201);
}

async function run(path: string, args: unknown = {}, timeoutMs = 120_000): Promise<Json> {
  const id = await (await s.post(`${ws()}/jobs/run/p/${path}`, args)).text();
  return waitForJob(s, id, timeoutMs);
}

describe('flow limits', () => {
  it('fails a flow that runs itself at the nesting limit instead of nesting for ever', async () => {
    await createFlow('u/admin/itself', [{ id: 'again', value: { type: 'flow', path: 'u/admin/itself', input_transforms: {} } }]);
    const job = await run('u/admin/itself');
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'FlowDepthLimit', step_id: 'again' });
  });

  it('fails a for loop over more items than the instance allows', async () => {
    const each = { id: 'each', value: { type: 'rawscript', language: 'bun', content: 'export function main(x: number) { return x + 1 }', input_transforms: { x: js('flow_input.iter.value') } } };
    await createFlow('u/admin/long_loop', [{ id: 'loop', value: { type: 'forloopflow', iterator: js('flow_input.items'), modules: [each] } }]);
    expect(await run('u/admin/long_loop', { items: [1, 2, 3] })).toMatchObject({ status: 'success', result: [2, 3, 4] });
    const job = await run('u/admin/long_loop', { items: [1, 2, 3, 4] });
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'ForLoopLimit', step_id: 'loop' });
    expect(job.flow_status.module_jobs?.loop ?? []).toHaveLength(0);
  });
});
