import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessService, until, type InProcessService } from './harness.js';
import { MAX_FLOW_DEPTH } from '../../../functions/core/runs/job-lineage.js';

/**
 * What a member's flow may make the service do at most (docs/flows.md, "Modules and inputs"): a
 * flow that runs itself stops at the nesting limit instead of nesting for ever, and a for loop
 * over a list longer than the instance's limit fails before writing a run per item.
 */

let s: InProcessService;
beforeAll(async () => {
  s = await inProcessService({ config: { flowMaxLoopItems: 5 } });
});

const ws = '/api/w/main';
const ts = (id: string, content: string, input_transforms: Record<string, unknown> = {}) => ({ id, value: { type: 'rawscript', language: 'bun', content, input_transforms } });
const js = (expr: string) => ({ type: 'javascript', expr });

async function createFlow(path: string, modules: unknown[]): Promise<void> {
  const res = await s.post(`${ws}/flows/create`, { path, value: { modules } });
  expect(res.status, await res.clone().text()).toBe(201);
}

async function start(path: string, args: unknown = {}): Promise<string> {
  return (await s.post(`${ws}/jobs/run/p/${path}`, args)).text();
}

/** The job as stored, read without waiting for everything to settle (a runaway never would). */
const stored = (id: string) => s.store.getJob('main', id);
const flowJobsOf = async (path: string) => (await s.store.listJobs({ workspace_id: 'main', limit: 10_000 })).filter((j) => j.kind === 'flow' && j.script_path === path);

describe('a flow that runs itself', () => {
  it('stops at the nesting limit and fails every level, instead of starting sub-flows for ever', async () => {
    await createFlow('u/admin/itself', [{ id: 'again', value: { type: 'flow', path: 'u/admin/itself', input_transforms: {} } }]);
    const id = await start('u/admin/itself');
    const job = await until(() => stored(id), (j) => j?.status === 'failed', 20_000);
    expect(job?.status).toBe('failed');
    expect((job?.result as { error: { name: string } }).error).toMatchObject({ name: 'FlowDepthLimit', step_id: 'again' });
    await s.settled();
    // The top flow and one run per level below it, each failed.
    const runs = await flowJobsOf('u/admin/itself');
    expect(runs).toHaveLength(MAX_FLOW_DEPTH + 1);
    expect(runs.every((j) => j.status === 'failed')).toBe(true);
  });

  it('still runs a recursion that ends before the limit', async () => {
    await createFlow('u/admin/countdown', [
      {
        id: 'more',
        value: {
          type: 'branchone',
          branches: [{ expr: 'flow_input.n > 0', modules: [{ id: 'down', value: { type: 'flow', path: 'u/admin/countdown', input_transforms: { n: js('flow_input.n - 1') } } }] }],
          default: [ts('bottom', 'export function main() { return "bottom" }')],
        },
      },
    ]);
    const id = await start('u/admin/countdown', { n: 4 });
    const job = await s.job(id);
    expect(job.status).toBe('success');
    expect(job.result).toBe('bottom');
  });
});

describe('a for loop over a long list', () => {
  it('fails over more items than the instance allows, starting no iteration', async () => {
    await createFlow('u/admin/long_loop', [
      { id: 'loop', value: { type: 'forloopflow', iterator: js('flow_input.items'), parallel: true, modules: [ts('each', 'export function main(x: number) { return x * 2 }', { x: js('flow_input.iter.value') })] } },
    ]);
    const ok = await s.job(await start('u/admin/long_loop', { items: [1, 2, 3, 4, 5] }));
    expect(ok.status).toBe('success');
    expect(ok.result).toEqual([2, 4, 6, 8, 10]);

    const before = (await flowJobsOf('u/admin/long_loop/loop')).length;
    const job = await s.job(await start('u/admin/long_loop', { items: [1, 2, 3, 4, 5, 6] }));
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'ForLoopLimit', step_id: 'loop' });
    expect((await flowJobsOf('u/admin/long_loop/loop')).length).toBe(before);
  });
});

describe('a branchall with many branches', () => {
  it('is refused at create beyond 200 branches, naming the field', async () => {
    const branches = (n: number) => Array.from({ length: n }, () => ({ modules: [] }));
    const make = (path: string, n: number) => s.post(`${ws}/flows/create`, { path, value: { modules: [{ id: 'fan', value: { type: 'branchall', branches: branches(n) } }] } });
    expect((await make('u/admin/fan_ok', 200)).status).toBe(201);
    const res = await make('u/admin/fan_out', 201);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ field: 'value.modules.0.value.branches' });
    expect((await s.fetch(`${ws}/flows/get/u/admin/fan_out`)).status).toBe(404);
  });
});

describe('a loop whose results together are too large', () => {
  // The memory service's output cap is 1 MiB: the results together may be 64 MiB (the floor), 75 of these.
  const big = 'export function main() { return "x".repeat(900_000) }';

  it('fails a branchall (and so a for loop: the same step) whose branches return more than the limit together, with ResultTooLarge', async () => {
    const fan = (n: number) => [{ id: 'fan', value: { type: 'branchall', parallel: true, branches: Array.from({ length: n }, (_, i) => ({ modules: [ts(`b${i}`, big)] })) } }];
    await createFlow('u/admin/big_fan_ok', fan(2));
    const small = await s.job(await start('u/admin/big_fan_ok'));
    expect(small.status).toBe('success');
    expect(small.result).toHaveLength(2);
    await createFlow('u/admin/big_fan', fan(80));
    const job = await s.job(await start('u/admin/big_fan'));
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'ResultTooLarge', step_id: 'fan' });
  });

  it('fails a while loop once its iterations returned more than the limit together', async () => {
    await createFlow('u/admin/big_while', [{ id: 'loop', stop_after_if: { expr: 'false' }, value: { type: 'whileloopflow', modules: [ts('each', big)] } }]);
    const id = await start('u/admin/big_while');
    const job = await s.job(id);
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'ResultTooLarge', step_id: 'loop' });
    // It stopped at the limit: 64 MiB of 900,000-character results, not the 1,000 iterations of the cap.
    expect(job.flow_status.module_jobs.loop.length).toBeLessThan(80);
  });
});

describe('a flow of many modules', () => {
  it('is refused at create beyond 1,000 modules, nested ones included', async () => {
    let n = 0;
    const loops = (perLoop: number) =>
      Array.from({ length: 5 }, (_, i) => ({ id: `loop${i}`, value: { type: 'forloopflow', iterator: { type: 'static', value: [] }, modules: Array.from({ length: perLoop }, () => ({ id: `m${n++}`, value: { type: 'identity' } })) } }));
    const make = (path: string, perLoop: number) => s.post(`${ws}/flows/create`, { path, value: { modules: loops(perLoop) } });
    expect((await make('u/admin/many_ok', 199)).status).toBe(201);
    const res = await make('u/admin/many_out', 200);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'invalid_flow', field: 'value.modules' });
  });
});
