import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessService, until, type InProcessService } from './harness.js';

/**
 * The interpreter's decisions when a step fails or must wait (docs/flows.md), in-process with a
 * clock the test moves: retries and their delays, sleeps, skip_if, stop_after_if, while loops and
 * their cap, the failure module. test/http/flow-resilience.test.ts does the same over HTTP in both shells.
 */

let s: InProcessService;
beforeAll(async () => {
  s = await inProcessService({ config: { flowMaxWhileIterations: 5 } });
});

const ws = '/api/w/main';
const ts = (id: string, content: string, extra: Record<string, unknown> = {}, input_transforms: Record<string, unknown> = {}) => ({
  id,
  value: { type: 'rawscript', language: 'bun', content, input_transforms },
  ...extra,
});
const js = (expr: string) => ({ type: 'javascript', expr });

/** A step that fails until its `n`-th run (counted in this process, per key). */
const flaky = (key: string, n: number) =>
  `export function main() { const g = globalThis as any; g["${key}"] = (g["${key}"] ?? 0) + 1; if (g["${key}"] < ${n}) throw new Error("flaky run " + g["${key}"]); return "ok on run " + g["${key}"] }`;

async function createFlow(path: string, value: Record<string, unknown>): Promise<void> {
  const res = await s.post(`${ws}/flows/create`, { path, value });
  expect(res.status, await res.clone().text()).toBe(201);
}

async function start(path: string, args: unknown = {}): Promise<string> {
  return (await s.post(`${ws}/jobs/run/p/${path}`, args)).text();
}

describe('retries', () => {
  it('runs a failing step again after its delays, each attempt a job of its own, and goes on when one succeeds', async () => {
    await createFlow('u/admin/retried', { modules: [ts('a', flaky('retried', 3), { retry: { exponential: { attempts: 3, multiplier: 1, seconds: 2 } } }), ts('b', 'export function main(x: string) { return "then " + x }', {}, { x: js('results.a') })] });
    const id = await start('u/admin/retried');
    let job = await s.job(id);
    expect(job.flow_status.wait).toMatchObject({ module: 'a', reason: 'retry' });
    expect(job.flow_status.attempts.a).toHaveLength(1);
    // Nothing happens before the delay (2^1 s) has passed.
    s.clock.advance(1_000);
    await s.flows.wakeDue(s.clock.now());
    expect((await s.job(id)).flow_status.attempts.a).toHaveLength(1);
    s.clock.advance(1_000);
    await s.flows.wakeDue(s.clock.now());
    job = await s.job(id);
    expect(job.flow_status.attempts.a).toHaveLength(2);
    s.clock.advance(4_000);
    await s.flows.wakeDue(s.clock.now());
    job = await s.job(id);
    expect(job.status).toBe('success');
    expect(job.result).toBe('then ok on run 3');
    const attempts = job.flow_status.attempts.a;
    expect(attempts.map((a: { attempt: number; status: string }) => [a.attempt, a.status])).toEqual([[1, 'failed'], [2, 'failed'], [3, 'success']]);
    expect(attempts[0].error).toMatchObject({ message: 'flaky run 1' });
    expect(Date.parse(attempts[0].retry_at) - Date.parse(attempts[0].at)).toBe(2_000);
    expect(Date.parse(attempts[1].retry_at) - Date.parse(attempts[1].at)).toBe(4_000);
    expect(new Set(attempts.map((a: { job: string }) => a.job)).size).toBe(3);
    expect(job.flow_status.module_jobs.a).toHaveLength(3);
  });

  it('fails the flow once the attempts are spent, unless the step continues on error', async () => {
    await createFlow('u/admin/spent', { modules: [ts('a', flaky('spent', 99), { retry: { constant: { attempts: 1, seconds: 0 } } })] });
    const job = await s.job(await start('u/admin/spent'));
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ message: 'flaky run 2', step_id: 'a' });
    expect(job.flow_status.attempts.a).toHaveLength(2);

    await createFlow('u/admin/spent_goes_on', { modules: [ts('a', flaky('spent_goes_on', 99), { retry: { constant: { attempts: 1, seconds: 0 } }, continue_on_error: true }), ts('b', 'export function main(e: any) { return "saw " + e.error.message }', {}, { e: js('previous_result') })] });
    expect(await s.job(await start('u/admin/spent_goes_on'))).toMatchObject({ status: 'success', result: 'saw flaky run 2' });
  });
});

describe('timeouts, sleeps, skips and stops', () => {
  it('hands a step its timeout, which the runner enforces', async () => {
    await createFlow('u/admin/timed', { modules: [ts('a', 'export function main() { return 1 }', { timeout: 3 })] });
    const before = s.runner.requests.length;
    expect((await s.job(await start('u/admin/timed'))).status).toBe('success');
    expect(s.runner.requests.slice(before).find((r) => r.env.OV_JOB_PATH === 'u/admin/timed/a')?.timeoutMs).toBe(3_000);
  });

  it('sleeps between two steps without a job, until the clock says', async () => {
    await createFlow('u/admin/sleepy', { modules: [ts('a', 'export function main() { return 1 }', { sleep: js('flow_input.seconds') }), ts('b', 'export function main() { return 2 }')] });
    const id = await start('u/admin/sleepy', { seconds: 30 });
    expect((await s.job(id)).flow_status.wait).toMatchObject({ module: 'a', reason: 'sleep' });
    s.clock.advance(29_000);
    await s.flows.wakeDue(s.clock.now());
    expect((await s.job(id)).status).toBe('running');
    s.clock.advance(1_000);
    await s.flows.wakeDue(s.clock.now());
    expect((await s.job(id)).result).toBe(2);
  });

  it('skips a step whose skip_if is true and stops the flow where stop_after_if says', async () => {
    await createFlow('u/admin/stops', {
      modules: [
        ts('skipped', 'export function main() { return "ran" }', { skip_if: { expr: 'flow_input.skip' } }),
        ts('check', 'export function main(n: number) { return n }', { stop_after_if: { expr: 'result > 10', skip_if_stopped: true } }, { n: js('flow_input.n') }),
        ts('after', 'export function main() { return "after" }'),
      ],
    });
    const stopped = await s.job(await start('u/admin/stops', { skip: true, n: 11 }));
    expect(stopped).toMatchObject({ status: 'success', result: 11 });
    expect(stopped.flow_status).toMatchObject({ skipped: ['skipped'], stopped_early: 'check', stop: { module: 'check', skipped: true } });
    expect(stopped.flow_status.results.after).toBeUndefined();
    const through = await s.job(await start('u/admin/stops', { skip: false, n: 1 }));
    expect(through).toMatchObject({ status: 'success', result: 'after' });
    expect(through.flow_status.results.skipped).toBe('ran');
  });

  it('fails the flow with stop_after_if error_message', async () => {
    await createFlow('u/admin/stop_fail', { modules: [ts('a', 'export function main() { return 0 }', { stop_after_if: { expr: 'result === 0', error_message: 'nothing to do' } })] });
    const job = await s.job(await start('u/admin/stop_fail'));
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'FlowStopped', message: 'nothing to do', step_id: 'a' });
  });
});

describe('while loops', () => {
  it('runs iterations until stop_after_if is true, returning every result', async () => {
    await createFlow('u/admin/while', {
      modules: [{ id: 'loop', value: { type: 'whileloopflow', skip_failures: false, modules: [ts('inner', 'export function main(i: number) { return i * 10 }', {}, { i: js('flow_input.iter.index') })] }, stop_after_if: { expr: 'result >= 20' } }],
    });
    const job = await s.job(await start('u/admin/while'));
    expect(job).toMatchObject({ status: 'success', result: [0, 10, 20] });
    expect(job.flow_status.module_jobs.loop).toHaveLength(3);
  });

  it('fails a loop that reaches the instance cap', async () => {
    await createFlow('u/admin/forever', { modules: [{ id: 'loop', value: { type: 'whileloopflow', modules: [ts('inner', 'export function main() { return 1 }')] }, stop_after_if: { expr: 'false' } }] });
    const job = await s.job(await start('u/admin/forever'));
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'WhileLoopLimit', step_id: 'loop', iterations: 5 });
  });

  it('refuses a while loop without stop_after_if', async () => {
    const res = await s.post(`${ws}/flows/create`, { path: 'u/admin/no_stop', value: { modules: [{ id: 'loop', value: { type: 'whileloopflow', modules: [] } }] } });
    expect(res.status).toBe(400);
  });
});

describe('failure module', () => {
  it('runs when the flow fails, with the error, the failed step and the flow input, and gives the flow its result', async () => {
    await createFlow('u/admin/handled', {
      modules: [ts('a', 'export function main() { throw new Error("boom") }')],
      failure_module: ts('failure', 'export function main(message: string, step: string, input: unknown) { return { handled: message, step, input } }', {}, { message: js('error.message'), step: js('previous_result.error.step_id'), input: js('flow_input') }),
    });
    const id = await start('u/admin/handled', { order: 7 });
    const job = await until(() => s.job(id), (j) => j.status !== 'running');
    expect(job.status).toBe('failed');
    expect(job.result).toEqual({ handled: 'boom', step: 'a', input: { order: 7 } });
    expect(job.flow_status.failure_module).toMatchObject({ module: 'failure', step_id: 'a' });
  });
});

describe('workspace error handler', () => {
  it('runs for a failed job and a failed flow, never for its own failure nor for a flow step', async () => {
    const post = async (path: string, body: unknown) => expect((await s.post(`${ws}/${path}`, body)).status).toBeLessThan(300);
    await post('scripts/create', { path: 'u/admin/handler_fails', language: 'bun', content: 'export function main(job_id: string) { throw new Error("handler down " + job_id) }' });
    await post('scripts/create', { path: 'u/admin/fails_once', language: 'bun', content: 'export function main() { throw new Error("nope") }' });
    await createFlow('u/admin/flow_fails', { modules: [{ id: 'a', value: { type: 'script', path: 'u/admin/fails_once', input_transforms: {} } }] });
    await post('workspaces/edit_error_handler', { path: 'u/admin/handler_fails' });
    const scriptJob = await s.job(await start('u/admin/fails_once'));
    const flowJob = await s.job(await start('u/admin/flow_fails'));
    await s.settled();
    const handled = (await s.store.listJobs({ workspace_id: 'main', limit: 10_000 })).filter((j) => j.script_path === 'u/admin/handler_fails');
    // One per failed top-level job; the flow's failed step and the handler's own failures call nothing.
    expect(handled.map((j) => (j.args as { job_id: string }).job_id).sort()).toEqual([scriptJob.id, flowJob.id].sort());
    expect(handled.every((j) => j.status === 'failed' && j.trigger === 'error_handler')).toBe(true);
    await post('workspaces/edit_error_handler', { path: null });
  });

  it('refuses a handler that does not exist, and fields it does not know', async () => {
    const res = await s.post(`${ws}/workspaces/edit_error_handler`, { path: 'u/admin/nowhere' });
    expect(res.status).toBe(400);
    expect((await res.json()).error.field).toBe('path');
    expect((await s.post(`${ws}/workspaces/edit_error_handler`, { path: 'u/admin/x', muted_on_cancel: true })).status).toBe(400);
  });
});

describe('cache_ttl of a flow', () => {
  it('has the result kept before the run is seen finished, so a caller that saw it finish and runs again is answered from the cache', async () => {
    await createFlow('u/admin/kept_flow', { cache_ttl: 60, modules: [ts('a', 'export function main(x: number) { return { x, run: Math.random() } }', {}, { x: js('flow_input.x') })] });
    const kept: boolean[] = [];
    const complete = s.store.completeJob.bind(s.store);
    s.store.completeJob = async (id, done, at) => {
      const job = await s.store.getJob('main', id);
      if (job?.kind === 'flow' && done.status === 'success') kept.push((await s.store.listEntities('result_cache', 'main')).some((e) => e.key.startsWith(`flow:${job.flow_version}:`)));
      return complete(id, done, at);
    };
    try {
      const first = await s.job(await start('u/admin/kept_flow', { x: 1 }));
      expect(kept).toEqual([true]);
      const again = await s.job(await start('u/admin/kept_flow', { x: 1 }));
      expect(again).toMatchObject({ status: 'success', cache_hit: true, result: first.result });
    } finally {
      s.store.completeJob = complete;
    }
  });
});
