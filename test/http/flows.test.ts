import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';
import { readSse } from './sse-client.js';

/** Flows over real HTTP (spec 2.4, 4.1, 9): definitions, versions, runs, branches and loops. */

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.stop());

const ws = () => `/api/w/${s.workspace}`;
const ts = (id: string, content: string, input_transforms: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  id,
  value: { type: 'rawscript', language: 'bun', content, input_transforms },
  ...extra,
});
const js = (expr: string) => ({ type: 'javascript', expr });
const fixed = (value: unknown) => ({ type: 'static', value });

async function createFlow(path: string, modules: unknown[], extra: Record<string, unknown> = {}): Promise<number> {
  const res = await s.post(`${ws()}/flows/create`, { path, summary: path, value: { modules }, ...extra });
  expect(res.status, await res.clone().text()).toBe(201);
  const history = await (await s.fetch(`${ws()}/flows/history/p/${path}`)).json();
  return history[0].id;
}

async function runSync(path: string, args: unknown): Promise<unknown> {
  const res = await s.post(`${ws()}/jobs/run_wait_result/p/${path}`, args);
  expect(res.status).toBe(200);
  return res.json();
}

describe('flow definitions and versions', () => {
  it('creates versions with global, increasing ids; fv URLs run exactly that version', async () => {
    const v1 = await createFlow('u/admin/versioned', [ts('a', 'export function main() { return "v1" }')]);
    const update = await s.post(`${ws()}/flows/update/u/admin/versioned`, { summary: 'second', value: { modules: [ts('a', 'export function main() { return "v2" }')] } });
    expect(update.status).toBe(200);
    const v2 = (await update.json()).id;
    expect(v2).toBeGreaterThan(v1);
    const history = await (await s.fetch(`${ws()}/flows/history/p/u/admin/versioned`)).json();
    expect(history.map((h: { id: number }) => h.id)).toEqual([v2, v1]);

    expect(await runSync('u/admin/versioned', {})).toBe('v2');
    expect(await (await s.post(`${ws()}/jobs/run_wait_result/fv/${v1}`, {})).json()).toBe('v1');
    const id = await (await s.post(`${ws()}/jobs/run/fv/${v1}`, {})).text();
    expect((await waitForJob(s, id)).result).toBe('v1');
    expect((await s.post(`${ws()}/jobs/run/fv/999999`, {})).status).toBe(404);
    expect((await (await s.fetch(`${ws()}/flows/get/u/admin/versioned`)).json()).summary).toBe('second');
  });

  it('shows what each job ran: the flow version and step in fields of their own, script_hash as before', async () => {
    const script = await createScript(s, 'u/admin/target_script', 'bun', 'export function main() { return 1 }');
    const version = await createFlow('u/admin/target_flow', [ts('a', 'export function main() { return 2 }'), { id: 'b', value: { type: 'script', path: 'u/admin/target_script', input_transforms: {} } }]);
    const id = await (await s.post(`${ws()}/jobs/run/fv/${version}`, {})).text();
    expect((await waitForJob(s, id)).result).toBe(1);
    const flow = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    expect(flow).toMatchObject({ job_kind: 'flow', script_path: 'u/admin/target_flow', script_hash: String(version), flow_version: version, flow_module: null });
    const steps = (await (await s.fetch(`${ws()}/jobs/list?per_page=100`)).json()).filter((j: { parent_job: string | null }) => j.parent_job === id);
    const step = steps.find((j: { job_kind: string }) => j.job_kind === 'flowstep');
    expect(step).toMatchObject({ script_path: 'u/admin/target_flow/a', script_hash: `${version}:a`, flow_version: version, flow_module: 'a' });
    const scriptStep = steps.find((j: { job_kind: string }) => j.job_kind === 'script');
    expect(scriptStep).toMatchObject({ script_path: 'u/admin/target_script', script_hash: script, flow_version: null, flow_module: null });
  });

  it('keeps script and flow paths apart, and refuses bad definitions naming the field', async () => {
    await createScript(s, 'u/admin/taken', 'bun', 'export function main() {}');
    expect((await s.post(`${ws()}/flows/create`, { path: 'u/admin/taken', value: { modules: [] } })).status).toBe(409);
    await createFlow('u/admin/a_flow', []);
    expect((await s.post(`${ws()}/scripts/create`, { path: 'u/admin/a_flow', language: 'bun', content: 'export function main() {}' })).status).toBe(409);

    const twice = await s.post(`${ws()}/flows/create`, { path: 'u/admin/bad', value: { modules: [ts('a', 'export function main() {}'), ts('a', 'export function main() {}')] } });
    expect(twice.status).toBe(400);
    expect((await twice.json()).error.field).toBe('value.modules');
    const badType = await s.post(`${ws()}/flows/create`, { path: 'u/admin/bad', value: { modules: [{ id: 'a', value: { type: 'teleport' } }] } });
    expect(badType.status).toBe(400);
    expect((await badType.json()).error.field).toMatch(/^value\.modules\.0\.value/);
    expect((await s.fetch(`${ws()}/flows/get/u/admin/bad`)).status).toBe(404);
  });

  it("validates a flow's inputs against its schema", async () => {
    await createFlow('u/admin/typed', [ts('a', 'export function main(n: number) { return n * 2 }', { n: js('flow_input.n') })], {
      schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    });
    const bad = await s.post(`${ws()}/jobs/run_wait_result/p/u/admin/typed`, { n: 'two' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.field).toBe('n');
    expect(await runSync('u/admin/typed', { n: 21 })).toBe(42);
  });
});

describe('running flows', () => {
  it('passes results along: flow_input, previous_result and results.<id>, across languages', async () => {
    await createFlow('u/admin/pipeline', [
      ts('double', 'export function main(x: number) { return x * 2 }', { x: js('flow_input.x') }),
      {
        id: 'describe',
        value: { type: 'rawscript', language: 'python3', content: 'def main(value: int, label: str):\n    return f"{label}={value}"\n', input_transforms: { value: js('previous_result'), label: fixed('double') } },
      },
      ts('both', 'export function main(a: number, b: string) { return { a, b } }', { a: js('results.double + 1'), b: js('results.describe') }),
    ]);
    expect(await runSync('u/admin/pipeline', { x: 20 })).toEqual({ a: 41, b: 'double=40' });
  });

  it('passes a large result to the steps after it and the API whole, in a loop too', async () => {
    // 200 KB: past what a flow run keeps inline (8 KB) and, on AWS, past an item's inline budget.
    const rows = 'export function main() { return { rows: Array.from({ length: 2000 }, (_, i) => ({ i, text: "r".repeat(90) })) } }';
    const count = 'export function main(n: number) { return n }';
    await createFlow('u/admin/large_result', [
      ts('fetch', rows),
      ts('first', count, { n: js('previous_result.rows.length') }),
      { id: 'each', value: { type: 'forloopflow', iterator: js('results.fetch.rows.slice(0, 3)'), skip_failures: false, modules: [ts('inner', count, { n: js('flow_input.iter.value.i + results.fetch.rows.length') })] } },
      ts('last', count, { n: js('results.fetch.rows[1999].i + results.first') }),
    ]);
    const res = await s.post(`${ws()}/jobs/run/p/u/admin/large_result`, {});
    const job = await waitForJob(s, await res.text());
    expect(job).toMatchObject({ success: true, result: 3999 });
    const results = job.flow_status.results;
    expect(results.fetch.rows).toHaveLength(2000);
    expect(results.fetch.rows[1999]).toEqual({ i: 1999, text: 'r'.repeat(90) });
    expect(results.each).toEqual([2000, 2001, 2002]);
  });

  it('pages through a while loop of large results and hands every page on', async () => {
    await createFlow('u/admin/large_pages', [
      { id: 'pages', value: { type: 'whileloopflow', skip_failures: false, modules: [ts('page', 'export function main(n: number) { return { n, rows: "p".repeat(10000) } }', { n: js('flow_input.iter.index') })] }, stop_after_if: { expr: 'result.n >= 3' } },
      ts('count', 'export function main(pages: any[]) { return pages.map((p) => p.n * 100000 + p.rows.length) }', { pages: js('results.pages') }),
    ]);
    expect(await runSync('u/admin/large_pages', {})).toEqual([10000, 110000, 210000, 310000]);
  });

  it("loops over a large input: each iteration's job holds its `iter`, its steps see the whole input", async () => {
    const count = 'export function main(n: number) { return n }';
    await createFlow('u/admin/large_input', [
      { id: 'each', value: { type: 'forloopflow', iterator: js('flow_input.items'), skip_failures: false, modules: [ts('inner', count, { n: js('flow_input.iter.value.i * 1000 + flow_input.items.length') })] } },
    ]);
    const items = Array.from({ length: 12 }, (_, i) => ({ i, text: 'i'.repeat(1000) }));
    const job = await waitForJob(s, await (await s.post(`${ws()}/jobs/run/p/u/admin/large_input`, { items })).text());
    expect(job).toMatchObject({ success: true, result: items.map((item) => item.i * 1000 + 12) });
    expect(job.args).toEqual({ items });
    const iteration = await (await s.fetch(`${ws()}/jobs_u/get/${job.flow_status.module_jobs.each[2]}`)).json();
    expect(iteration.args).toEqual({ iter: { index: 2, value: items[2] } });
  });

  it('runs a loop of 240 iterations (its id list past what a run keeps inline) and shows every one', async () => {
    const double = 'export function main(n: number) { return n * 2 }';
    await createFlow('u/admin/long_loop', [
      { id: 'each', value: { type: 'forloopflow', iterator: js('flow_input.items'), parallel: true, parallelism: 8, skip_failures: true, modules: [ts('inner', double, { n: js('flow_input.iter.value') })] } },
      ts('sum', 'export function main(all: number[]) { return all.reduce((a, b) => a + b, 0) }', { all: js('results.each') }),
    ]);
    const items = Array.from({ length: 240 }, (_, i) => i);
    const job = await waitForJob(s, await (await s.post(`${ws()}/jobs/run/p/u/admin/long_loop`, { items })).text(), 100_000);
    expect(job).toMatchObject({ success: true, result: 240 * 239 });
    const iterations = job.flow_status.module_jobs.each as string[];
    expect(new Set(iterations).size).toBe(240);
    const last = await (await s.fetch(`${ws()}/jobs_u/get/${iterations[239]}`)).json();
    expect(last.args).toEqual({ iter: { index: 239, value: 239 } });
  }, 120_000);

  it('fails at a failing step unless it continues on error', async () => {
    await createFlow('u/admin/fails', [ts('boom', 'export function main() { throw new Error("kaput") }'), ts('after', 'export function main() { return "after" }')]);
    const failed = (await runSync('u/admin/fails', {})) as { error: { message: string; step_id: string } };
    expect(failed.error).toMatchObject({ message: 'kaput', step_id: 'boom' });

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

  it("runs at most a parallel loop's `parallelism` iterations at once, and stops a sequential loop at a failed iteration", async () => {
    // Each iteration says when it ran, by its own clock, so the overlap is measured by the runs themselves.
    const timed = 'export async function main(i: number) { const start = Date.now(); await new Promise((r) => setTimeout(r, 300)); return { i, start, end: Date.now() } }';
    await createFlow('u/admin/windowed_loop', [
      { id: 'loop', value: { type: 'forloopflow', iterator: fixed([0, 1, 2, 3, 4]), parallel: true, parallelism: 2, modules: [ts('timed', timed, { i: js('flow_input.iter.value') })] } },
    ]);
    const runs = (await runSync('u/admin/windowed_loop', {})) as { i: number; start: number; end: number }[];
    expect(runs.map((r) => r.i)).toEqual([0, 1, 2, 3, 4]);
    const edges = runs.flatMap((r) => [{ at: r.start, d: 1 }, { at: r.end, d: -1 }]).sort((a, b) => a.at - b.at || a.d - b.d);
    let now = 0;
    let most = 0;
    for (const e of edges) most = Math.max(most, (now += e.d));
    // At most: the emulated AWS shell runs one job at a time.
    expect(most).toBeLessThanOrEqual(2);

    await createFlow('u/admin/stops_on_failure', [
      { id: 'loop', value: { type: 'forloopflow', iterator: fixed([1, 2, 3]), parallel: false, modules: [ts('check', 'export function main(n: number) { if (n === 2) throw new Error("bad item " + n); return n }', { n: js('flow_input.iter.value') })] } },
    ]);
    const failed = await waitForJob(s, await (await s.post(`${ws()}/jobs/run/p/u/admin/stops_on_failure`, {})).text(), 60_000);
    expect(failed.status).toBe('failed');
    expect(failed.result.error.message).toContain('bad item 2');
    expect(failed.flow_status.module_jobs.loop).toHaveLength(2);
  });

  it('runs a script by path and another flow as steps', async () => {
    await createScript(s, 'u/admin/greeter', 'python3', 'def main(name: str):\n    return "hello " + name\n');
    await createFlow('u/admin/inner', [ts('shout', 'export function main(s: string) { return s.toUpperCase() + "!" }', { s: js('flow_input.s') })]);
    await createFlow('u/admin/outer', [
      { id: 'greet', value: { type: 'script', path: 'u/admin/greeter', input_transforms: { name: js('flow_input.name') } } },
      { id: 'sub', value: { type: 'flow', path: 'u/admin/inner', input_transforms: { s: js('previous_result') } } },
    ]);
    expect(await runSync('u/admin/outer', { name: 'ada' })).toBe('HELLO ADA!');
  });

  it('cancels a running flow through the API, stopping its running steps down through sub-flows', async () => {
    const sleeper = 'export async function main() { await new Promise((r) => setTimeout(r, 60_000)); return "woke" }';
    await createFlow('u/admin/sleepy_inner', [ts('nap', sleeper)]);
    await createFlow('u/admin/sleepy', [
      {
        id: 'both',
        value: { type: 'branchall', parallel: true, branches: [{ modules: [ts('nap', sleeper)] }, { modules: [{ id: 'sub', value: { type: 'flow', path: 'u/admin/sleepy_inner', input_transforms: {} } }] }] },
      },
      ts('never', 'export function main() { return "should not run" }'),
    ]);
    const id = await (await s.post(`${ws()}/jobs/run/p/u/admin/sleepy`, {})).text();
    // Both naps running: the branch's script step and the sub-flow's.
    let naps: { id: string; status: string }[] = [];
    for (const deadline = Date.now() + 20_000; naps.length < 2 && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const jobs = await (await s.fetch(`${ws()}/jobs/list?per_page=100`)).json();
      naps = jobs.filter((j: { script_path: string; status: string }) => j.script_path.endsWith('/nap') && j.status === 'running');
    }
    expect(naps).toHaveLength(2);

    const cancel = await s.post(`${ws()}/jobs_u/queue/cancel/${id}`, { reason: 'enough' });
    expect(cancel.status).toBe(200);
    const flow = await waitForJob(s, id);
    expect(flow.status).toBe('canceled');
    // The naps are stopped now, not a minute later.
    for (const nap of naps) expect((await waitForJob(s, nap.id)).status).toBe('canceled');
    const after = await (await s.fetch(`${ws()}/jobs/list?per_page=100`)).json();
    expect(after.filter((j: { script_path: string }) => j.script_path.endsWith('/never'))).toEqual([]);
  });

  it('ends the flow at a trigger step that finds no new events, and goes on when it finds some', async () => {
    const modules = [
      ts('watch', 'export function main(events: number[]) { return events }', { events: js('flow_input.events') }, { is_trigger: true }),
      ts('handle', 'export function main(events: number[]) { return "handled " + events.length }', { events: js('previous_result') }),
    ];
    await createFlow('u/admin/triggered', modules);
    expect(await runSync('u/admin/triggered', { events: [1, 2] })).toBe('handled 2');

    const id = await (await s.post(`${ws()}/jobs/run/p/u/admin/triggered`, { events: [] })).text();
    const job = await waitForJob(s, id);
    expect(job).toMatchObject({ status: 'success', result: [] });
    const view = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    expect(view.flow_status).toMatchObject({ stopped_early: 'watch' });
    expect(Object.keys(view.flow_status.results)).toEqual(['watch']);
  });

  it('shares a ./shared folder between the steps of a same_worker flow, across languages, and nowhere else', async () => {
    const write = {
      id: 'write',
      value: { type: 'rawscript', language: 'bash', input_transforms: {}, content: 'mkdir -p shared/notes\nprintf "from bash" > shared/notes/a.txt\nln -s /etc/hostname shared/link\necho written' },
    };
    const read = {
      id: 'read',
      value: {
        type: 'rawscript',
        language: 'python3',
        input_transforms: {},
        content: 'import os\n\ndef main():\n    with open("shared/notes/a.txt") as f:\n        text = f.read()\n    with open("shared/py.txt", "w") as f:\n        f.write(text + " and python")\n    return {"text": text, "link": os.path.lexists("shared/link")}\n',
      },
    };
    const last = ts('last', 'import { readFileSync, readdirSync } from "node:fs";\nexport function main() { return { py: readFileSync("shared/py.txt", "utf8"), files: readdirSync("shared").sort() } }');
    await createFlow('u/admin/same_worker', [], { value: { modules: [write, read, last], same_worker: true } });
    const id = await (await s.post(`${ws()}/jobs/run/p/u/admin/same_worker`, {})).text();
    const job = await waitForJob(s, id);
    expect(job.status, JSON.stringify(job.result)).toBe('success');
    expect(job.result).toEqual({ py: 'from bash and python', files: ['notes', 'py.txt'] });
    const view = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    // Only regular files travel: the link a step made is not there for the next one.
    expect(view.flow_status.results.read).toEqual({ text: 'from bash', link: false });

    // Without same_worker each step starts with nothing.
    await createFlow('u/admin/separate_workers', [write, read]);
    const separate = await waitForJob(s, await (await s.post(`${ws()}/jobs/run/p/u/admin/separate_workers`, {})).text());
    expect(separate.status).toBe('failed');
    expect(JSON.stringify(separate.result)).toMatch(/No such file/);
  });

  it('reports an expression that throws as the failing step', async () => {
    await createFlow('u/admin/bad_expr', [ts('a', 'export function main(x: number) { return x }', { x: js('flow_input.missing.deep') })]);
    const failed = (await runSync('u/admin/bad_expr', {})) as { error: { name: string; step_id: string } };
    expect(failed.error).toMatchObject({ name: 'ExpressionError', step_id: 'a' });
  });

  it('answers a sync call at the early-return step while the rest of the flow runs on', async () => {
    await createFlow(
      'u/admin/early',
      [ts('quick', 'export function main() { return "accepted" }'), ts('slow', 'export async function main() { await new Promise((r) => setTimeout(r, 1500)); return "all done" }')],
      { value: { modules: [ts('quick', 'export function main() { return "accepted" }'), ts('slow', 'export async function main() { await new Promise((r) => setTimeout(r, 1500)); return "all done" }')], early_return: 'quick' } },
    );
    expect(await runSync('u/admin/early', {})).toBe('accepted');
    const jobs = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=u/admin/early`)).json();
    const flowJob = jobs.find((j: { job_kind: string }) => j.job_kind === 'flow');
    expect(['running', 'success']).toContain(flowJob.status);
    expect((await waitForJob(s, flowJob.id)).result).toBe('all done');
  });

  it('streams a flow over SSE only when its last step is a script that streams (spec 4.5)', async () => {
    const gen = 'export async function* main(w: string[]) { for (const x of w) { yield x + " "; await new Promise((r) => setTimeout(r, 150)); } }';
    await createFlow('u/admin/streaming', [ts('words', 'export function main() { return ["one", "two", "three"] }'), ts('speak', gen, { w: js('previous_result') })]);
    const events = await readSse(await s.post(`${ws()}/jobs/run_and_stream/p/u/admin/streaming`, {}));
    const last = events.at(-1);
    expect(last).toMatchObject({ completed: true, status: 'success', only_result: 'one two three ' });
    const streamed = events.map((e) => e.new_result_stream ?? '').join('');
    expect(streamed).toBe('one two three ');
    // Progress arrived before the end.
    expect(events.filter((e) => !e.completed && e.new_result_stream).length).toBeGreaterThanOrEqual(1);

    await createFlow('u/admin/not_streaming', [ts('speak', gen, { w: fixed(['a']) }), ts('done', 'export function main() { return "plain" }')]);
    const plain = await readSse(await s.post(`${ws()}/jobs/run_and_stream/p/u/admin/not_streaming`, {}));
    expect(plain.at(-1)).toMatchObject({ completed: true, only_result: 'plain' });
    expect(plain.every((e) => !e.new_result_stream)).toBe(true);
  });
});
