import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createScript, inProcessService, until, type InProcessService } from './harness.js';
import { subflowRuns } from '../../../functions/core/flows/subflow-runs.js';
import { authenticate } from '../../../functions/core/identity/auth.js';
import { Rights } from '../../../functions/core/identity/permissions.js';

/**
 * Flow rules in-process (spec 2.4, 4.1, 9): definitions and versions, stepping, results passing,
 * errors, branches, loops, sub-flows, cancel, triggers and early return. test/http/flows.test.ts
 * keeps what needs the real runner (steps in several languages, the shared folder, SSE timing).
 */

let s: InProcessService;
beforeAll(async () => {
  s = await inProcessService();
});

const ws = '/api/w/main';
const ts = (id: string, content: string, input_transforms: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  id,
  value: { type: 'rawscript', language: 'bun', content, input_transforms },
  ...extra,
});
const js = (expr: string) => ({ type: 'javascript', expr });
const fixed = (value: unknown) => ({ type: 'static', value });
const NEVER_ENDS = 'export async function main() { await new Promise(() => {}); return "woke" }';

async function createFlow(path: string, modules: unknown[], extra: Record<string, unknown> = {}): Promise<number> {
  const res = await s.post(`${ws}/flows/create`, { path, summary: path, value: { modules }, ...extra });
  expect(res.status, await res.clone().text()).toBe(201);
  const history = await (await s.fetch(`${ws}/flows/history/p/${path}`)).json();
  return history[0].id;
}

async function runSync(path: string, args: unknown): Promise<unknown> {
  const res = await s.post(`${ws}/jobs/run_wait_result/p/${path}`, args);
  expect(res.status).toBe(200);
  return res.json();
}

const jobsOf = async () => s.store.listJobs({ workspace_id: 'main', limit: 10_000 });

describe('flow definitions and versions', () => {
  it('creates versions with global, increasing ids; fv URLs run exactly that version', async () => {
    const v1 = await createFlow('u/admin/versioned', [ts('a', 'export function main() { return "v1" }')]);
    const update = await s.post(`${ws}/flows/update/u/admin/versioned`, { summary: 'second', value: { modules: [ts('a', 'export function main() { return "v2" }')] } });
    expect(update.status).toBe(200);
    const v2 = (await update.json()).id;
    expect(v2).toBeGreaterThan(v1);
    const history = await (await s.fetch(`${ws}/flows/history/p/u/admin/versioned`)).json();
    expect(history.map((h: { id: number }) => h.id)).toEqual([v2, v1]);

    expect(await runSync('u/admin/versioned', {})).toBe('v2');
    expect(await (await s.post(`${ws}/jobs/run_wait_result/fv/${v1}`, {})).json()).toBe('v1');
    const id = await (await s.post(`${ws}/jobs/run/fv/${v1}`, {})).text();
    expect((await s.job(id)).result).toBe('v1');
    expect((await s.post(`${ws}/jobs/run/fv/999999`, {})).status).toBe(404);
    expect((await s.post(`${ws}/jobs/run/fv/not-a-number`, {})).status).toBe(404);
    expect((await (await s.fetch(`${ws}/flows/get/u/admin/versioned`)).json()).summary).toBe('second');
  });

  it('keeps script and flow paths apart, and refuses bad definitions naming the field', async () => {
    await createScript(s, 'u/admin/taken', 'export function main() {}');
    expect((await s.post(`${ws}/flows/create`, { path: 'u/admin/taken', value: { modules: [] } })).status).toBe(409);
    await createFlow('u/admin/a_flow', []);
    expect((await s.post(`${ws}/scripts/create`, { path: 'u/admin/a_flow', language: 'bun', content: 'export function main() {}' })).status).toBe(409);

    const twice = await s.post(`${ws}/flows/create`, { path: 'u/admin/bad', value: { modules: [ts('a', 'export function main() {}'), ts('a', 'export function main() {}')] } });
    expect(twice.status).toBe(400);
    expect((await twice.json()).error.field).toBe('value.modules');
    const badType = await s.post(`${ws}/flows/create`, { path: 'u/admin/bad', value: { modules: [{ id: 'a', value: { type: 'teleport' } }] } });
    expect(badType.status).toBe(400);
    expect((await badType.json()).error.field).toMatch(/^value\.modules\.0\.value/);
    expect((await s.fetch(`${ws}/flows/get/u/admin/bad`)).status).toBe(404);
  });

  it("validates a flow's inputs against its schema, queueing nothing for bad ones", async () => {
    await createFlow('u/admin/typed', [ts('a', 'export function main(n: number) { return n * 2 }', { n: js('flow_input.n') })], {
      schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    });
    const before = (await jobsOf()).length;
    const bad = await s.post(`${ws}/jobs/run_wait_result/p/u/admin/typed`, { n: 'two' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.field).toBe('n');
    expect((await jobsOf()).length).toBe(before);
    expect(await runSync('u/admin/typed', { n: 21 })).toBe(42);
  });
});

describe('running flows', () => {
  it('passes results along: flow_input, previous_result and results.<id>', async () => {
    await createFlow('u/admin/pipeline', [
      ts('double', 'export function main(x: number) { return x * 2 }', { x: js('flow_input.x') }),
      ts('describe', 'export function main(value: number, label: string) { return `${label}=${value}` }', { value: js('previous_result'), label: fixed('double') }),
      ts('both', 'export function main(a: number, b: string) { return { a, b } }', { a: js('results.double + 1'), b: js('results.describe') }),
    ]);
    expect(await runSync('u/admin/pipeline', { x: 20 })).toEqual({ a: 41, b: 'double=40' });
  });

  it('gives each step the flow it runs in (spec 2.3)', async () => {
    await createFlow('u/admin/context', [ts('env', 'export function main() { return [process.env.OV_FLOW_PATH, process.env.OV_FLOW_JOB_ID, process.env.OV_ROOT_FLOW_JOB_ID] }')]);
    const id = await (await s.post(`${ws}/jobs/run/p/u/admin/context`, {})).text();
    expect((await s.job(id)).result).toEqual(['u/admin/context', id, id]);
  });

  it('fails at a failing step unless it continues on error', async () => {
    await createFlow('u/admin/fails', [ts('boom', 'export function main() { throw new Error("kaput") }'), ts('after', 'export function main() { return "after" }')]);
    const failed = (await runSync('u/admin/fails', {})) as { error: { message: string; step_id: string } };
    expect(failed.error).toMatchObject({ message: 'kaput', step_id: 'boom' });
    expect((await jobsOf()).filter((j) => j.script_path.endsWith('/after'))).toEqual([]);

    await createFlow('u/admin/shrugs', [
      ts('boom', 'export function main() { throw new Error("kaput") }', {}, { continue_on_error: true }),
      ts('after', 'export function main(e: any) { return "saw " + e.error.message }', { e: js('previous_result') }),
    ]);
    expect(await runSync('u/admin/shrugs', {})).toBe('saw kaput');
  });

  it('takes the first true branch of a branchone, or its default', async () => {
    await createFlow('u/admin/router', [
      {
        id: 'route',
        value: {
          type: 'branchone',
          branches: [
            { expr: 'flow_input.n > 100', modules: [ts('big', 'export function main() { return "big" }')] },
            { expr: 'flow_input.n > 10', modules: [ts('medium', 'export function main(n: number) { return "medium " + n }', { n: js('flow_input.n') })] },
          ],
          default: [ts('small', 'export function main() { return "small" }')],
        },
      },
    ]);
    expect(await runSync('u/admin/router', { n: 500 })).toBe('big');
    expect(await runSync('u/admin/router', { n: 50 })).toBe('medium 50');
    expect(await runSync('u/admin/router', { n: 5 })).toBe('small');
  });

  it('runs every branch of a branchall and loops over items, in parallel or in order', async () => {
    await createFlow('u/admin/fanout', [
      ts('seed', 'export function main() { return 10 }'),
      {
        id: 'all',
        value: {
          type: 'branchall',
          parallel: true,
          branches: [
            { modules: [ts('plus', 'export function main(x: number) { return x + 1 }', { x: js('results.seed') })] },
            { modules: [ts('times', 'export function main(x: number) { return x * 3 }', { x: js('results.seed') })] },
          ],
        },
      },
      {
        id: 'loop',
        value: {
          type: 'forloopflow',
          iterator: js('previous_result'),
          parallel: false,
          modules: [ts('square', 'export function main(v: number, i: number) { return `${i}:${v * v}` }', { v: js('flow_input.iter.value'), i: js('flow_input.iter.index') })],
        },
      },
    ]);
    expect(await runSync('u/admin/fanout', {})).toEqual(['0:121', '1:900']);

    await createFlow('u/admin/parallel_loop', [
      {
        id: 'loop',
        value: { type: 'forloopflow', iterator: fixed(['a', 'b', 'c']), parallel: true, modules: [ts('upper', 'export function main(s: string) { return s.toUpperCase() }', { s: js('flow_input.iter.value') })] },
      },
    ]);
    expect(await runSync('u/admin/parallel_loop', {})).toEqual(['A', 'B', 'C']);
  });

  it('runs a script by path and another flow as steps', async () => {
    await createScript(s, 'u/admin/greeter', 'export function main(name: string) { return "hello " + name }');
    await createFlow('u/admin/inner', [ts('shout', 'export function main(s: string) { return s.toUpperCase() + "!" }', { s: js('flow_input.s') })]);
    await createFlow('u/admin/outer', [
      { id: 'greet', value: { type: 'script', path: 'u/admin/greeter', input_transforms: { name: js('flow_input.name') } } },
      { id: 'sub', value: { type: 'flow', path: 'u/admin/inner', input_transforms: { s: js('previous_result') } } },
    ]);
    expect(await runSync('u/admin/outer', { name: 'ada' })).toBe('HELLO ADA!');
  });

  it('cancels a running flow through the API, stopping its running steps down through sub-flows', async () => {
    await createFlow('u/admin/sleepy_inner', [ts('nap', NEVER_ENDS)]);
    await createFlow('u/admin/sleepy', [
      {
        id: 'both',
        value: { type: 'branchall', parallel: true, branches: [{ modules: [ts('nap', NEVER_ENDS)] }, { modules: [{ id: 'sub', value: { type: 'flow', path: 'u/admin/sleepy_inner', input_transforms: {} } }] }] },
      },
      ts('never', 'export function main() { return "should not run" }'),
    ]);
    const id = await (await s.post(`${ws}/jobs/run/p/u/admin/sleepy`, {})).text();
    const naps = (await until(jobsOf, (jobs) => jobs.filter((j) => j.script_path.endsWith('/nap') && j.status === 'running').length === 2)).filter((j) => j.script_path.endsWith('/nap'));
    expect(naps.map((j) => j.status)).toEqual(['running', 'running']);

    expect((await s.post(`${ws}/jobs_u/queue/cancel/${id}`, { reason: 'enough' })).status).toBe(200);
    expect((await s.job(id)).status).toBe('canceled');
    for (const nap of naps) expect((await s.job(nap.id)).status).toBe('canceled');
    expect((await jobsOf()).filter((j) => j.script_path.endsWith('/never'))).toEqual([]);
  });

  it('ends the flow at a trigger step that finds no new events, and goes on when it finds some', async () => {
    await createFlow('u/admin/triggered', [
      ts('watch', 'export function main(events: number[]) { return events }', { events: js('flow_input.events') }, { is_trigger: true }),
      ts('handle', 'export function main(events: number[]) { return "handled " + events.length }', { events: js('previous_result') }),
    ]);
    expect(await runSync('u/admin/triggered', { events: [1, 2] })).toBe('handled 2');

    const id = await (await s.post(`${ws}/jobs/run/p/u/admin/triggered`, { events: [] })).text();
    const view = await s.job(id);
    expect(view).toMatchObject({ status: 'success', result: [] });
    expect(view.flow_status).toMatchObject({ stopped_early: 'watch' });
    expect(Object.keys(view.flow_status.results)).toEqual(['watch']);
  });

  it('reports an expression that throws as the failing step', async () => {
    await createFlow('u/admin/bad_expr', [ts('a', 'export function main(x: number) { return x }', { x: js('flow_input.missing.deep') })]);
    const failed = (await runSync('u/admin/bad_expr', {})) as { error: { name: string; step_id: string } };
    expect(failed.error).toMatchObject({ name: 'ExpressionError', step_id: 'a' });
  });

  it("answers a sync caller from the flow's own wake, reading the flow job back no more than each step's turn does", async () => {
    const steps = Array.from({ length: 10 }, (_, i) => ts(`s${i}`, 'export function main(n: number = 0) { return n + 1 }', i === 0 ? {} : { n: js(`results.s${i - 1}`) }));
    await createFlow('u/admin/ten', steps);
    const reads = vi.spyOn(s.store, 'getJob');
    try {
      expect(await runSync('u/admin/ten', {})).toBe(10);
      const flowJob = (await jobsOf()).find((j) => j.kind === 'flow' && j.script_path === 'u/admin/ten')!;
      // Each of the 11 turns of the interpreter reads the flow job; the waiting caller, woken at
      // every turn, reads it once at the start (before: once per turn as well, 20 and more in all).
      expect(reads.mock.calls.filter(([, id]) => id === flowJob.id).length).toBeLessThanOrEqual(13);
    } finally {
      reads.mockRestore();
    }
  });

  it('answers a sync call at the early-return step while the rest of the flow runs on', async () => {
    let release!: () => void;
    (globalThis as Record<string, unknown>).releaseSlowStep = new Promise<void>((r) => (release = r));
    const modules = [ts('quick', 'export function main() { return "accepted" }'), ts('slow', 'export async function main() { await globalThis.releaseSlowStep; return "all done" }')];
    await createFlow('u/admin/early', [], { value: { modules, early_return: 'quick' } });
    expect(await runSync('u/admin/early', {})).toBe('accepted');
    const flowJob = (await jobsOf()).find((j) => j.kind === 'flow' && j.script_path === 'u/admin/early')!;
    expect(flowJob.status).toBe('running');
    release();
    expect((await s.job(flowJob.id)).result).toBe('all done');
  });
});

describe('loops at scale', () => {
  /** A sequential loop over `n` items of 100 characters each, as a user's list of records: the jobs read while it ran and the largest stored run of the loop's flow. */
  async function loopCosts(n: number): Promise<{ reads: number; largestRun: number; result: unknown }> {
    const path = `u/admin/long_loop_${n}`;
    await createFlow(path, [
      { id: 'loop', value: { type: 'forloopflow', iterator: js('flow_input.items'), parallel: false, modules: [ts('len', 'export function main(item: string, i: number) { return i + item.length }', { item: js('flow_input.iter.value'), i: js('flow_input.iter.index') })] } },
    ]);
    let reads = 0;
    let largestRun = 0;
    const getJob = s.store.getJob.bind(s.store);
    s.store.getJob = (ws, id) => {
      reads++;
      return getJob(ws, id);
    };
    const replace = vi.spyOn(s.store, 'replaceEntity');
    const items = Array.from({ length: n }, (_, i) => String(i).padStart(100, '.'));
    try {
      const id = await (await s.post(`${ws}/jobs/run/p/${path}`, { items })).text();
      await s.settled();
      const before = reads;
      const finished = await s.job(id);
      reads = before;
      for (const call of replace.mock.calls) if (call[0].kind === 'flow_run' && call[0].key === id) largestRun = Math.max(largestRun, JSON.stringify(call[0].value).length);
      return { reads, largestRun, result: finished.result };
    } finally {
      s.store.getJob = getJob;
      replace.mockRestore();
    }
  }

  it("costs a sequential loop's flow as much for its last iteration as for its first: neither its reads nor its stored run grow with the iterations before", async () => {
    const small = await loopCosts(10);
    const large = await loopCosts(40);
    expect(small.result).toEqual(Array.from({ length: 10 }, (_, i) => i + 100));
    expect(large.result).toEqual(Array.from({ length: 40 }, (_, i) => i + 100));
    // Per iteration: a read or two of its job and one of all results at the end, however long the loop.
    expect(large.reads / 40).toBeLessThanOrEqual(small.reads / 10 + 1);
    // The run holds the input (the items) once, and a few bytes per iteration: four times the items, at most four times the bytes.
    expect(large.largestRun).toBeLessThan(4.5 * small.largestRun);
  });

  it('stops a sequential loop at its first failed iteration, as a while loop does; with skip_failures it runs every item', async () => {
    const body = [ts('check', 'export function main(n: number) { if (n === 2) throw new Error("item " + n + " is bad"); return n * 10 }', { n: js('flow_input.iter.value') })];
    await createFlow('u/admin/stops_at_failure', [{ id: 'loop', value: { type: 'forloopflow', iterator: fixed([1, 2, 3]), parallel: false, skip_failures: false, modules: body } }]);
    await createFlow('u/admin/skips_failure', [{ id: 'loop', value: { type: 'forloopflow', iterator: fixed([1, 2, 3]), parallel: false, skip_failures: true, modules: body } }]);
    const ran = async () => (await jobsOf()).filter((j) => j.kind === 'flowstep' && j.flow_module === 'check').length;

    const before = await ran();
    const runsBefore = (await s.store.listEntities('flow_run', 'main')).length;
    const stopped = await s.job(await (await s.post(`${ws}/jobs/run/p/u/admin/stops_at_failure`, {})).text());
    expect(stopped.status).toBe('failed');
    expect(stopped.result.error.message).toContain('item 2 is bad');
    expect((await ran()) - before).toBe(2);
    // The console lists the iterations that ran, not those that never started.
    expect(stopped.flow_status.module_jobs.loop).toHaveLength(2);
    // The run made for the third item (it holds the flow's input) is gone with it: only the flow's and two iterations' remain.
    expect((await s.store.listEntities('flow_run', 'main')).length - runsBefore).toBe(3);

    const skipped = await s.job(await (await s.post(`${ws}/jobs/run/p/u/admin/skips_failure`, {})).text());
    expect(skipped.status).toBe('success');
    expect(skipped.result[0]).toBe(10);
    expect(skipped.result[1].error.message).toContain('item 2 is bad');
    expect(skipped.result[2]).toBe(30);
  });

  it("starts a parallel loop's iterations `parallelism` at a time, the next as one ends", async () => {
    await createFlow('u/admin/windowed', [
      { id: 'loop', value: { type: 'forloopflow', iterator: fixed([1, 2, 3, 4, 5]), parallel: true, parallelism: 2, modules: [ts('nap', NEVER_ENDS)] } },
    ]);
    const runsBefore = (await s.store.listEntities('flow_run', 'main')).length;
    const id = await (await s.post(`${ws}/jobs/run/p/u/admin/windowed`, {})).text();
    const iterations = async () => (await jobsOf()).filter((j) => j.script_path === 'u/admin/windowed/loop');
    const napping = async () => (await jobsOf()).filter((j) => j.script_path.endsWith('/nap') && j.status === 'running');
    const first = await until(napping, (naps) => naps.length === 2);
    expect(await iterations()).toHaveLength(2);
    // One ends: the third starts, and still no more than two run.
    expect((await s.post(`${ws}/jobs_u/queue/cancel/${first[0].id}`, { reason: 'done with it' })).status).toBe(200);
    await until(iterations, (its) => its.length === 3);
    const now = await until(napping, (naps) => naps.length === 2 && !naps.some((n) => n.id === first[0].id));
    expect(now.map((n) => n.id)).toContain(first[1].id);
    expect(await iterations()).toHaveLength(3);
    expect((await s.post(`${ws}/jobs_u/queue/cancel/${id}`, { reason: 'enough' })).status).toBe(200);
    expect((await s.job(id)).status).toBe('canceled');
    // The two iterations that never started leave no run behind: the flow's and three iterations' remain.
    expect((await s.store.listEntities('flow_run', 'main')).length - runsBefore).toBe(4);
  });

  it("keeps no copy of the flow's results in each iteration's run, and the iterations' steps, nested ones too, still read them", async () => {
    await createFlow('u/admin/records_loop', [
      ts('fetch', 'export function main() { return Array.from({ length: 20 }, (_, i) => ({ i, text: "x".repeat(1000) })) }'),
      {
        id: 'loop',
        value: {
          type: 'forloopflow',
          iterator: js('results.fetch'),
          parallel: false,
          modules: [
            ts('count', 'export function main(n: number, i: number) { return n * 100 + i }', { n: js('results.fetch.length'), i: js('flow_input.iter.value.i') }),
            { id: 'inner', value: { type: 'forloopflow', iterator: fixed([0]), parallel: false, modules: [ts('deep', 'export function main(t: number, c: number) { return t + c }', { t: js('results.fetch[0].text.length'), c: js('results.count') })] } },
          ],
        },
      },
    ]);
    let largest = 0;
    let top = '';
    const sizes = (e: { kind: string; key: string; value: unknown }) => {
      if (e.kind === 'flow_run' && e.key !== top) largest = Math.max(largest, JSON.stringify(e.value).length);
    };
    const create = s.store.createEntity.bind(s.store);
    const replace = s.store.replaceEntity.bind(s.store);
    s.store.createEntity = (e, ...rest) => (sizes(e), create(e, ...rest));
    s.store.replaceEntity = (e, ...rest) => (sizes(e), replace(e, ...rest));
    try {
      top = await (await s.post(`${ws}/jobs/run/p/u/admin/records_loop`, {})).text();
      const job = await s.job(top);
      expect(job.status).toBe('success');
      // Each iteration: its inner loop's one result, the text's length plus what `count` made of the records.
      expect(job.result).toEqual(Array.from({ length: 20 }, (_, i) => [1000 + 2000 + i]));
    } finally {
      s.store.createEntity = create;
      s.store.replaceEntity = replace;
    }
    // The records are 20,000 characters and more; an iteration's run holds its item, not them.
    expect(largest).toBeGreaterThan(0);
    expect(largest).toBeLessThan(5_000);
  });

  it("lists a loop's iteration runs for the run page without each one's copy of the flow's input", async () => {
    await createFlow('u/admin/listed_loop', [
      { id: 'loop', value: { type: 'forloopflow', iterator: js('flow_input.items'), parallel: false, modules: [ts('first', 'export function main(s: string) { return s[0] }', { s: js('flow_input.iter.value') })] } },
    ]);
    const items = Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(1_000, '.'));
    const id = await (await s.post(`${ws}/jobs/run/p/u/admin/listed_loop`, { items })).text();
    expect((await s.job(id)).status).toBe('success');
    const admin = await authenticate(s.deps, { bearer: s.token, session: null });
    const runs = await subflowRuns(s.deps, await Rights.load(s.deps, admin, 'main'), id);
    expect(runs).toHaveLength(20);
    expect(runs.every((r) => r.status === 'success' && r.flow_status?.modules[0] === 'first')).toBe(true);
    // 20 iterations of a 20,000-character input: without the copies, far less than one copy per iteration.
    expect(JSON.stringify(runs).length).toBeLessThan(20 * 20_000);
    expect(runs[0].args).toBeNull();
  });

  it('ends a parallel loop whose first iteration to finish never woke the loop: a later wake finds it ended', async () => {
    await createFlow('u/admin/lossy_loop', [
      { id: 'loop', value: { type: 'forloopflow', iterator: fixed([1, 2, 3, 4, 5]), parallel: true, modules: [ts('double', 'export function main(x: number) { return x * 2 }', { x: js('flow_input.iter.value') })] } },
    ]);
    const wake = s.flows.wake.bind(s.flows);
    let dropped: string | null = null;
    s.flows.wake = async (ws, id, step) => {
      if (dropped === null && step && (await s.store.getJob(ws, id))?.script_path === 'u/admin/lossy_loop') {
        dropped = step.id;
        return;
      }
      return wake(ws, id, step);
    };
    try {
      expect(await runSync('u/admin/lossy_loop', {})).toEqual([2, 4, 6, 8, 10]);
      expect(dropped).not.toBeNull();
    } finally {
      s.flows.wake = wake;
    }
  });
});
