import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Flows that survive the real world (issue 32, docs/flows.md), over real HTTP in both shells:
 * retries with their delays, step timeouts, the failure module, stops, while loops and their cap,
 * sleeps that survive a restart, and settings svc does not know refused naming their path.
 */

const WHILE_CAP = 4;
let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SVC_FLOW_MAX_WHILE_ITERATIONS: String(WHILE_CAP) } });
});
afterAll(() => s?.stop());

const js = (expr: string) => ({ type: 'javascript', expr });
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON view, read as a client reads it
type Json = Record<string, any>;

async function createFlow(path: string, value: Record<string, unknown>): Promise<void> {
  const res = await s.post(`${ws()}/flows/create`, { path, value });
  expect(res.status, await res.clone().text()).toBe(201);
}

async function run(path: string, args: unknown = {}, timeoutMs = 60_000): Promise<Json> {
  const id = await (await s.post(`${ws()}/jobs/run/p/${path}`, args)).text();
  return waitForJob(s, id, timeoutMs);
}

const job = async (id: string): Promise<Json> => (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();

const ws = () => `/api/w/${s.workspace}`;
const ts = (id: string, content: string, extra: Record<string, unknown> = {}) => ({
  id,
  value: { type: 'rawscript', language: 'bun', content, input_transforms: {} },
  ...extra,
});

describe('unknown fields are refused, never dropped', () => {
  it('refuses a flow with a field svc does not know, naming its path, and stores nothing', async () => {
    const res = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/unknown_field',
      value: { modules: [ts('a', 'export function main() { return 1 }', { retyr: { constant: { attempts: 3, seconds: 1 } } })] },
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.field).toBe('value.modules.0.retyr');
    expect(body.error.message).toContain('value.modules.0.retyr');
    expect((await s.fetch(`${ws()}/flows/get/u/admin/unknown_field`)).status).toBe(404);

    const nested = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/unknown_field',
      value: { modules: [{ id: 'loop', value: { type: 'forloopflow', iterator: { type: 'static', value: [1] }, modules: [ts('b', 'export function main() {}', { mock: { enabled: true, return_value: 1 } })] } }] },
    });
    expect(nested.status).toBe(400);
    expect((await nested.json()).error.field).toBe('value.modules.0.value.modules.0.mock');

    const topLevel = await s.post(`${ws()}/flows/create`, { path: 'u/admin/unknown_field', value: { modules: [] }, dedicated_worker: true });
    expect(topLevel.status).toBe(400);
    expect((await topLevel.json()).error.field).toBe('dedicated_worker');
  });

  it('refuses a step id every JavaScript object already has (__proto__, constructor), naming its path, and stores nothing', async () => {
    // Such a flow used to be stored, and its run stayed `running` for good: the engine's records
    // keyed by step id read Object.prototype's (`the stored flow_run ... does not match its
    // schema`), and jobs_u/get on the run answered 500.
    for (const id of ['__proto__', 'constructor']) {
      const res = await s.post(`${ws()}/flows/create`, { path: 'u/admin/prototype_id', value: { modules: [ts(id, 'export function main() { return 1 }')] } });
      expect(res.status, await res.clone().text()).toBe(400);
      expect((await res.json()).error.field).toBe('value.modules.0.id');
      const nested = await s.post(`${ws()}/flows/create`, {
        path: 'u/admin/prototype_id',
        value: { modules: [{ id: 'loop', value: { type: 'forloopflow', iterator: { type: 'static', value: [1] }, modules: [ts(id, 'export function main() {}')] } }] },
      });
      expect(nested.status).toBe(400);
      expect((await nested.json()).error.field).toBe('value.modules.0.value.modules.0.id');
    }
    expect((await s.fetch(`${ws()}/flows/get/u/admin/prototype_id`)).status).toBe(404);
  });

  it('refuses a script with a field svc does not know', async () => {
    const res = await s.post(`${ws()}/scripts/create`, { path: 'u/admin/unknown_script_field', language: 'bun', content: 'export function main() {}', concurrency_limit: 2 });
    expect(res.status).toBe(400);
    expect((await res.json()).error.field).toBe('concurrency_limit');
  });

  it('keeps the presentation fields of the modelled service as given', async () => {
    const notes = [{ id: 'n1', text: 'read me', color: 'yellow', type: 'free' }];
    const res = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/with_notes',
      value: { modules: [{ ...ts('a', 'export function main() { return 1 }'), value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1 }', input_transforms: {}, path: 'u/admin/with_notes/a' } }], notes },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const flow = await (await s.fetch(`${ws()}/flows/get/u/admin/with_notes`)).json();
    expect(flow.value.notes).toEqual(notes);
    expect(flow.value.modules[0].value.path).toBe('u/admin/with_notes/a');
  });
});

describe('retries, timeouts and the failure module', () => {
  it('runs a step that fails twice again after its exponential delays; attempt 3 succeeds and the flow goes on', async () => {
    // The steps share ./shared (same_worker), where the step counts its runs.
    const flaky = 'import { existsSync, readFileSync, writeFileSync } from "node:fs";\nexport function main() {\n  const n = (existsSync("shared/n") ? Number(readFileSync("shared/n", "utf8")) : 0) + 1;\n  writeFileSync("shared/n", String(n));\n  if (n < 3) throw new Error("flaky run " + n);\n  return n;\n}';
    await createFlow('u/admin/flaky', {
      same_worker: true,
      modules: [
        ts('charge', flaky, { retry: { exponential: { attempts: 3, multiplier: 1, seconds: 2 } } }),
        { id: 'receipt', value: { type: 'rawscript', language: 'bun', content: 'export function main(n: number) { return "charged on attempt " + n }', input_transforms: { n: js('results.charge') } } },
      ],
    });
    const flow = await run('u/admin/flaky');
    expect(flow).toMatchObject({ status: 'success', result: 'charged on attempt 3' });
    const attempts = flow.flow_status.attempts.charge as Json[];
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([[1, 'failed'], [2, 'failed'], [3, 'success']]);
    expect(attempts[0].error.message).toContain('flaky run 1');
    expect(attempts[1].error.message).toContain('flaky run 2');
    // The n-th retry waits multiplier × seconds^n: 2 s, then 4 s, measured from the stored times.
    const jobs = await Promise.all(attempts.map((a) => job(a.job)));
    expect(new Set(jobs.map((j) => j.id)).size).toBe(3);
    for (const [i, delay] of [2_000, 4_000].entries()) {
      expect(Date.parse(attempts[i].retry_at) - Date.parse(attempts[i].at)).toBe(delay);
      expect(Date.parse(jobs[i + 1].created_at)).toBeGreaterThanOrEqual(Date.parse(attempts[i].retry_at));
      expect(Date.parse(jobs[i + 1].created_at) - Date.parse(jobs[i].completed_at)).toBeGreaterThanOrEqual(delay);
    }
  });

  it('stops a step at its timeout; the failure module records the error and gives the failed flow its result', async () => {
    await createFlow('u/admin/slow_step', {
      modules: [ts('slow', 'export async function main() { await new Promise((r) => setTimeout(r, 30_000)); return "late" }', { timeout: 2 }), ts('never', 'export function main() { return "never" }')],
      failure_module: {
        id: 'failure',
        value: {
          type: 'rawscript',
          language: 'bun',
          content: 'export function main(name: string, message: string, step: string, order: number) { return { recorded: name, message, step, order } }',
          input_transforms: { name: js('error.name'), message: js('error.message'), step: js('previous_result.error.step_id'), order: js('flow_input.order') },
        },
      },
    });
    const flow = await run('u/admin/slow_step', { order: 42 });
    expect(flow.status).toBe('failed');
    expect(flow.result).toMatchObject({ recorded: 'TimeoutError', step: 'slow', order: 42 });
    expect(flow.result.message).toContain('2s');
    expect(flow.flow_status.failure_module).toMatchObject({ module: 'failure', step_id: 'slow' });
    expect(flow.flow_status.results.never).toBeUndefined();
  });
});

describe('step settings: cache_ttl and priority are honoured, the rest refused with their path', () => {
  it("answers a step with cache_ttl from its cache on an identical run, marked cache_hit; a step's priority is its job's", async () => {
    await createFlow('u/admin/step_cache', {
      modules: [
        { id: 'quote', cache_ttl: 600, value: { type: 'rawscript', language: 'bun', content: 'export function main(item: string) { return { item, quote: Math.random() } }', input_transforms: { item: js('flow_input.item') } } },
        ts('book', 'export function main() { return "booked" }', { priority: 7 }),
      ],
    });
    const first = await run('u/admin/step_cache', { item: 'chair' });
    expect(first.status).toBe('success');
    const second = await run('u/admin/step_cache', { item: 'chair' });
    expect(second.flow_status.results.quote).toEqual(first.flow_status.results.quote);
    const [firstQuote] = first.flow_status.module_jobs.quote as string[];
    const [hitId] = second.flow_status.module_jobs.quote as string[];
    const hit = await job(hitId);
    expect(hit).toMatchObject({ status: 'success', cache_hit: true, started_at: null });
    expect(hit.logs).toContain(firstQuote);
    expect((await job(firstQuote)).cache_hit).toBeFalsy();
    // The run says which of its steps came from the cache.
    expect(second.flow_status.cache_hits).toEqual({ quote: hitId });
    expect(first.flow_status.cache_hits).toBeUndefined();
    const other = await run('u/admin/step_cache', { item: 'table' });
    expect(other.flow_status.results.quote.item).toBe('table');
    expect((await job((other.flow_status.module_jobs.quote as string[])[0])).cache_hit).toBeFalsy();

    const [book] = second.flow_status.module_jobs.book as string[];
    expect((await job(book)).priority).toBe(7);
  });

  it('refuses a step setting where it means nothing, naming its path', async () => {
    const refused = async (modules: unknown[], field: string, failure_module?: unknown) => {
      const res = await s.post(`${ws()}/flows/create`, { path: 'u/admin/bad_settings', value: { modules, ...(failure_module ? { failure_module } : {}) } });
      expect(res.status, field).toBe(400);
      expect((await res.json()).error.field).toBe(field);
    };
    const branch = (extra: Record<string, unknown>) => ({ id: 'both', value: { type: 'branchall', branches: [{ modules: [ts('x', 'export function main() {}')] }] }, ...extra });
    await refused([branch({ cache_ttl: 60 })], 'value.modules.0.cache_ttl');
    await refused([{ id: 'same', value: { type: 'identity' }, priority: 5 }], 'value.modules.0.priority');
    await refused([ts('a', 'export function main() {}'), ts('b', 'export function main() {}', { delete_after_use: true })], 'value.modules.1.delete_after_use');
    await refused([ts('ask', 'export function main() {}', { suspend: { required_events: 1 }, cache_ttl: 60 })], 'value.modules.0.cache_ttl');
    await refused([branch({ suspend: { required_events: 1 } })], 'value.modules.0.suspend');
    await refused([{ id: 'loop', value: { type: 'forloopflow', iterator: { type: 'static', value: [1] }, modules: [{ id: 'inner', value: { type: 'identity' }, timeout: 5 }] } }], 'value.modules.0.value.modules.0.timeout');
    await refused([ts('a', 'export function main() {}')], 'value.failure_module.cache_ttl', ts('failure', 'export function main() {}', { cache_ttl: 60 }));
    expect((await s.fetch(`${ws()}/flows/get/u/admin/bad_settings`)).status).toBe(404);
  });
});

describe('the failure module after an approval that does not come', () => {
  /** Records what ended the flow: the error's name and message, and the step. */
  const failureModule = {
    id: 'failure',
    value: {
      type: 'rawscript',
      language: 'bun',
      content: 'export function main(name: string, message: string, step: string) { return { handled: name, message, step } }',
      input_transforms: { name: js('error.name'), message: js('error.message'), step: js('previous_result.error.step_id') },
    },
  };
  const ASK = "import * as svc from 'svc-client';\nexport async function main() { return await svc.getResumeUrls('carol') }";
  const approvalFlow = (timeout: number) => ({
    modules: [ts('ask', ASK, { suspend: { required_events: 1, timeout } }), ts('ship', 'export function main() { return "shipped" }')],
    failure_module: failureModule,
  });
  const gateFlow = (timeout: number) => ({
    modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['role:admin'], self_approval: true, timeout, message: 'ship it?' } }, ts('ship', 'export function main() { return "shipped" }')],
    failure_module: failureModule,
  });

  async function startUntil(path: string, status: string): Promise<Json> {
    const id = await (await s.post(`${ws()}/jobs/run/p/${path}`, {})).text();
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const view = await job(id);
      if (view.status === status) return view;
      if (['success', 'failed', 'canceled'].includes(view.status)) throw new Error(`flow ended as ${view.status}: ${JSON.stringify(view.result)}`);
    }
    throw new Error(`flow ${id} never became ${status}`);
  }

  it('runs when an approval step is canceled; the flow stays canceled with the failure module\'s result', async () => {
    await createFlow('u/admin/approve_cancel', approvalFlow(600));
    const waiting = await startUntil('u/admin/approve_cancel', 'suspended');
    const cancelUrl = (waiting.flow_status.results.ask.cancel as string).replace(/^https?:\/\/[^/]+/, '');
    const res = await s.fetch(cancelUrl, { method: 'POST', token: null, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'too expensive' }) });
    expect(res.status, await res.clone().text()).toBe(200);
    const flow = await waitForJob(s, waiting.id);
    expect(flow.status).toBe('canceled');
    expect(flow.result).toMatchObject({ handled: 'Canceled', step: 'ask' });
    expect(flow.result.message).toContain('too expensive');
    expect(flow.flow_status.failure_module).toMatchObject({ module: 'failure', step_id: 'ask' });
    expect(flow.flow_status.results.ship).toBeUndefined();
  });

  it('runs when an approval step times out', async () => {
    await createFlow('u/admin/approve_late', approvalFlow(1));
    const waiting = await startUntil('u/admin/approve_late', 'suspended');
    const flow = await waitForJob(s, waiting.id, 30_000);
    expect(flow.status).toBe('canceled');
    expect(flow.result).toMatchObject({ handled: 'SuspendTimeout', step: 'ask' });
  });

  it('runs when a ConsentGate is rejected, and when it times out', async () => {
    await createFlow('u/admin/gate_reject', gateFlow(600));
    const waiting = await startUntil('u/admin/gate_reject', 'awaiting_approval');
    const res = await s.post(`/api/v1/runs/${waiting.id}/consent`, { decision: 'rejected', reason: 'wrong address' });
    expect(res.status, await res.clone().text()).toBe(200);
    const rejected = await waitForJob(s, waiting.id);
    expect(rejected.status).toBe('failed');
    expect(rejected.result).toMatchObject({ handled: 'ConsentRejected', step: 'gate' });
    expect(rejected.result.message).toContain('wrong address');

    await createFlow('u/admin/gate_late', gateFlow(1));
    const late = await startUntil('u/admin/gate_late', 'awaiting_approval');
    const timedOut = await waitForJob(s, late.id, 30_000);
    expect(timedOut.status).toBe('failed');
    expect(timedOut.result).toMatchObject({ handled: 'ConsentTimeout', step: 'gate' });
    expect(timedOut.flow_status.failure_module).toMatchObject({ module: 'failure', step_id: 'gate' });
  });
});

describe('stops and while loops', () => {
  it('ends the flow early where stop_after_if says, skipping what follows', async () => {
    await createFlow('u/admin/early_stop', {
      modules: [
        ts('count', 'export function main(n: number) { return n }', { stop_after_if: { expr: 'result === 0', skip_if_stopped: true } }),
        ts('work', 'export function main() { return "worked" }'),
      ].map((m, i) => (i === 0 ? { ...m, value: { ...m.value, input_transforms: { n: js('flow_input.n') } } } : m)),
    });
    const stopped = await run('u/admin/early_stop', { n: 0 });
    expect(stopped).toMatchObject({ status: 'success', result: 0 });
    expect(stopped.flow_status).toMatchObject({ stopped_early: 'count', stop: { module: 'count', skipped: true } });
    expect(stopped.flow_status.results.work).toBeUndefined();
    expect(await run('u/admin/early_stop', { n: 3 })).toMatchObject({ status: 'success', result: 'worked' });
  });

  it('runs a while loop until its condition, and fails one that reaches the instance cap', async () => {
    const body = { type: 'rawscript', language: 'bun', content: 'export function main(i: number) { return i * 2 }', input_transforms: { i: js('flow_input.iter.index') } };
    await createFlow('u/admin/while_ends', { modules: [{ id: 'loop', value: { type: 'whileloopflow', skip_failures: false, modules: [{ id: 'double', value: body }] }, stop_after_if: { expr: 'result >= 4' } }] });
    const ended = await run('u/admin/while_ends');
    expect(ended).toMatchObject({ status: 'success', result: [0, 2, 4] });
    expect(ended.flow_status.module_jobs.loop).toHaveLength(3);

    await createFlow('u/admin/while_cap', { modules: [{ id: 'loop', value: { type: 'whileloopflow', skip_failures: false, modules: [{ id: 'double', value: body }] }, stop_after_if: { expr: 'result < 0' } }] });
    const capped = await run('u/admin/while_cap');
    expect(capped.status).toBe('failed');
    expect(capped.result.error).toMatchObject({ name: 'WhileLoopLimit', step_id: 'loop', iterations: WHILE_CAP });
    expect(capped.flow_status.module_jobs.loop).toHaveLength(WHILE_CAP);
  });
});

// Restarting the service is the local shell's (its timers come back from SQLite); on AWS a sleep is
// a Step Functions wait, which no process holds.
describe.skipIf(process.env.SVC_TEST_SHELL === 'aws')('sleep', () => {
  it('waits between two steps and goes on after a restart of the service mid-sleep', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-sleep-'));
    try {
      let local = await startServer({ dataDir, token: 'sleep-admin' });
      const base = `/api/w/${local.workspace}`;
      const res = await local.post(`${base}/flows/create`, { path: 'u/admin/sleeper', value: { modules: [ts('before', 'export function main() { return Date.now() }', { sleep: 3 }), ts('after', 'export function main() { return Date.now() }')] } });
      expect(res.status).toBe(201);
      const id = await (await local.post(`${base}/jobs/run/p/u/admin/sleeper`, {})).text();
      let view: Json = {};
      for (let i = 0; i < 200 && !view.flow_status?.wait; i++) {
        view = await (await local.fetch(`${base}/jobs_u/get/${id}`)).json();
        if (!view.flow_status?.wait) await new Promise((r) => setTimeout(r, 50));
      }
      expect(view.flow_status.wait).toMatchObject({ module: 'before', reason: 'sleep' });
      await local.kill9();
      local = await startServer({ dataDir, token: 'sleep-admin' });
      try {
        const done = await waitForJob(local, id, 30_000);
        expect(done.status).toBe('success');
        expect(done.result - done.flow_status.results.before).toBeGreaterThanOrEqual(3_000);
      } finally {
        await local.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('workspace error handler', () => {
  it('runs the handler with what failed for a failed script run', async () => {
    const handler = 'export function main(job_id: string, path: string, is_flow: boolean, error: any, team: string) { return { job_id, path, is_flow, message: error.message, team } }';
    expect((await s.post(`${ws()}/scripts/create`, { path: 'u/admin/on_error', language: 'bun', content: handler })).status).toBe(201);
    expect((await s.post(`${ws()}/scripts/create`, { path: 'u/admin/breaks', language: 'bun', content: 'export function main() { throw new Error("disk full") }' })).status).toBe(201);
    const missing = await s.post(`${ws()}/workspaces/edit_error_handler`, { path: 'u/admin/nothing_here' });
    expect(missing.status).toBe(400);
    const set = await s.post(`${ws()}/workspaces/edit_error_handler`, { path: 'script/u/admin/on_error', extra_args: { team: 'ops' } });
    expect(set.status, await set.clone().text()).toBe(200);
    expect((await (await s.fetch(`${ws()}/workspaces/get_settings`)).json()).error_handler).toEqual({ path: 'u/admin/on_error', extra_args: { team: 'ops' } });

    const failed = await run('u/admin/breaks');
    expect(failed.status).toBe('failed');
    let handled: Json[] = [];
    for (let i = 0; i < 400 && handled.length === 0; i++) {
      handled = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=u/admin/on_error&per_page=10`)).json();
      if (handled.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(handled).toHaveLength(1);
    const result = await waitForJob(s, handled[0].id);
    expect(result.result).toEqual({ job_id: failed.id, path: 'u/admin/breaks', is_flow: false, message: 'disk full', team: 'ops' });
    expect(result.trigger).toBe('error_handler');
    expect((await s.post(`${ws()}/workspaces/edit_error_handler`, { path: null })).status).toBe(200);
  });
});

describe('schedule recovery', () => {
  it("runs the schedule's on_recovery when a run succeeds after a failure", async () => {
    // The scheduled script fails while the variable says so; the test mends it after a failure.
    expect((await s.post(`${ws()}/variables/create`, { path: 'u/admin/db_state', value: 'down' })).status).toBe(201);
    expect((await s.post(`${ws()}/scripts/create`, { path: 'u/admin/nightly_sync', language: 'bun', content: 'export function main(state: string) { if (state === "down") throw new Error("db down"); return "synced" }' })).status).toBe(201);
    expect((await s.post(`${ws()}/scripts/create`, { path: 'u/admin/recovered', language: 'bun', content: 'export function main(error: any, previous_job_id: string, success_result: unknown, failed_times: number) { return { message: error.message, previous_job_id, success_result, failed_times } }' })).status).toBe(201);
    const created = await s.post(`${ws()}/schedules/create`, { path: 'u/admin/nightly_sync', schedule: '* * * * * *', script_path: 'u/admin/nightly_sync', args: { state: '$var:u/admin/db_state' }, on_recovery: 'u/admin/recovered' });
    expect(created.status, await created.clone().text()).toBe(201);
    const poll = async (url: string, done: (jobs: Json[]) => boolean): Promise<Json[]> => {
      for (let i = 0; i < 600; i++) {
        const jobs: Json[] = await (await s.fetch(url)).json();
        if (done(jobs)) return jobs;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`nothing yet at ${url}`);
    };
    const runs = `${ws()}/jobs/list?schedule_path=u/admin/nightly_sync&per_page=1000`;
    await poll(runs, (jobs) => jobs.some((j) => j.status === 'failed'));
    expect((await s.post(`${ws()}/variables/update/u/admin/db_state`, { value: 'up' })).status).toBe(200);
    const [recovery] = await poll(`${ws()}/jobs/list?script_path_exact=u/admin/recovered&per_page=10`, (jobs) => jobs.length > 0);
    expect((await s.post(`${ws()}/schedules/setenabled/u/admin/nightly_sync`, { enabled: false })).status).toBe(200);
    const result = (await waitForJob(s, recovery.id)).result;
    expect(result).toMatchObject({ message: 'db down', success_result: 'synced' });
    expect(result.failed_times).toBeGreaterThanOrEqual(1);
    expect((await job(result.previous_job_id)).status).toBe('failed');
  }, 90_000);
});
