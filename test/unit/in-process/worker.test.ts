import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger, useLogFormat, useLogger } from '../../../functions/core/common/logger.js';
import { executeJob } from '../../../functions/core/runs/worker.js';
import { cancelSignal, queuedJob } from '../../../functions/core/jobs/jobs.js';
import type { JobSignals } from '../../../functions/ports.js';
import { createScript, inProcessService, json, type InProcessService } from './harness.js';

/**
 * The worker's rules (core/runs/worker.ts) in-process: at-least-once delivery never runs a job twice,
 * a job a dead worker left behind is run again once its lease is over (by the service's clock),
 * and what user code is given. Redeliveries call the worker as a queue would.
 * test/http/durability.test.ts shows the same across a real kill -9 and restart.
 */

let s: InProcessService;
const ws = '/api/w/main';
const JOB_TIMEOUT_MS = 60_000;

beforeAll(async () => {
  s = await inProcessService({ config: { jobTimeoutMs: JOB_TIMEOUT_MS } });
  await createScript(s, 'u/admin/inc', 'export function main(n: number) { console.log("inc", n); return n + 1 }');
});

/** A job stored as queued without being handed to the queue, as one the queue has yet to deliver. */
async function undeliveredJob(path: string, args: Record<string, unknown>) {
  const script = (await s.store.getLatestScript('main', path))!;
  const job = queuedJob(s.clock.now().toISOString(), { workspace_id: 'main', kind: 'script', parent_job: null, script_path: path, script_hash: script.hash, flow_version: null, flow_module: null, language: script.language, args, created_by: 'admin' });
  await s.store.insertJob(job);
  return job;
}

describe('the worker', () => {
  it('runs a job claimed by a worker that died once its lease has run out, counting a second attempt', async () => {
    // Claimed by a worker that crashed before running it.
    const job = await undeliveredJob('u/admin/inc', { n: 41 });
    const leaseEnd = new Date(s.clock.now().getTime() + JOB_TIMEOUT_MS + 60_000).toISOString();
    expect(await s.store.claimJob(job.id, s.clock.now().toISOString(), leaseEnd)).not.toBeNull();

    // Redelivered while the lease holds: the worker may be alive, so nothing runs.
    await executeJob(s.deps, job.id);
    expect(s.runner.requests.filter((r) => r.jobId === job.id)).toHaveLength(0);
    expect((await s.store.getJob('main', job.id))?.status).toBe('running');

    // Redelivered after it: the job is taken over and finished.
    s.clock.advance(JOB_TIMEOUT_MS + 61_000);
    await executeJob(s.deps, job.id);
    expect(await s.job(job.id)).toMatchObject({ status: 'success', result: 42, attempts: 2 });
  });

  it('never runs a finished job again, however often it is delivered', async () => {
    const id = await (await s.fetch(`${ws}/jobs/run/p/u/admin/inc`, json({ n: 1 }))).text();
    await s.settled();
    const runs = s.runner.requests.filter((r) => r.jobId === id).length;
    s.clock.advance(10 * JOB_TIMEOUT_MS);
    await executeJob(s.deps, id);
    await executeJob(s.deps, id);
    expect(s.runner.requests.filter((r) => r.jobId === id)).toHaveLength(runs);
    expect(await s.job(id)).toMatchObject({ status: 'success', result: 2, attempts: 1 });
  });

  it('fails a job whose script version is gone, naming the version', async () => {
    const hash = await createScript(s, 'u/admin/doomed', 'export function main() { return 1 }');
    const job = await undeliveredJob('u/admin/doomed', {});
    expect((await s.fetch(`${ws}/scripts/delete/p/u/admin/doomed`, { method: 'POST' })).status).toBe(200);
    await executeJob(s.deps, job.id);
    const done = await s.job(job.id);
    expect(done).toMatchObject({ status: 'failed', result: { error: { name: 'ScriptNotFound' } } });
    expect(done.result.error.message).toContain(hash);
  });

  it('gives user code exactly its job environment and the shorter of its own and the instance timeout', async () => {
    await createScript(s, 'u/admin/quick', 'export function main() { return 1 }', { timeout: 5 });
    await createScript(s, 'u/admin/greedy', 'export function main() { return 1 }', { timeout: 3600 });
    const quick = await (await s.fetch(`${ws}/jobs/run/p/u/admin/quick`, { method: 'POST' })).text();
    const greedy = await (await s.fetch(`${ws}/jobs/run/p/u/admin/greedy`, { method: 'POST' })).text();
    await s.settled();
    const request = (id: string) => s.runner.requests.find((r) => r.jobId === id)!;
    expect(request(quick).timeoutMs).toBe(5_000);
    expect(request(greedy).timeoutMs).toBe(JOB_TIMEOUT_MS);
    const env = request(quick).env;
    const own = Object.keys(env).filter((k) => !k.startsWith('WM_') && k !== 'BASE_URL');
    expect(own.sort()).toEqual(['BASE_INTERNAL_URL', 'OV_JOB_ATTEMPT', 'OV_JOB_ID', 'OV_JOB_PATH', 'OV_TOKEN', 'OV_USERNAME', 'OV_WORKSPACE']);
    expect(env).toMatchObject({ OV_JOB_ID: quick, OV_JOB_PATH: 'u/admin/quick', OV_USERNAME: 'admin', OV_WORKSPACE: 'main' });
    // Nothing else: the rest are the same values under Windmill's names (docs/windmill.md).
    expect(Object.keys(env).filter((k) => !own.includes(k)).sort()).toEqual([
      'BASE_URL', 'WM_BASE_URL', 'WM_EMAIL', 'WM_FLOW_JOB_ID', 'WM_FLOW_PATH', 'WM_FLOW_STEP_ID', 'WM_JOB_ID', 'WM_JOB_PATH', 'WM_PERMISSIONED_AS',
      'WM_ROOT_FLOW_JOB_ID', 'WM_SCHEDULE_PATH', 'WM_STATE_PATH', 'WM_STATE_PATH_NEW', 'WM_TOKEN', 'WM_USERNAME', 'WM_WORKSPACE',
    ]);
    expect(env).toMatchObject({ WM_TOKEN: env.OV_TOKEN, WM_JOB_ID: quick, WM_WORKSPACE: 'main', WM_BASE_URL: env.BASE_INTERNAL_URL, WM_STATE_PATH: 'u/admin/quick/user' });
  });

  it('leaves no wait behind once a run is over: its watch for a cancel ends with it', async () => {
    // Every wait the worker starts, and whether it has ended.
    const pending = new Map<number, string>();
    let next = 0;
    const signals: JobSignals = {
      notify: (id, finished) => s.deps.signals.notify(id, finished),
      wait: (id, ms) => {
        const n = next++;
        pending.set(n, id);
        return s.deps.signals.wait(id, ms).finally(() => pending.delete(n));
      },
    };
    const job = await undeliveredJob('u/admin/inc', { n: 1 });
    await executeJob({ ...s.deps, signals }, job.id);
    expect(await s.job(job.id)).toMatchObject({ status: 'success', result: 2 });
    // The watch was there while the job ran...
    expect(next).toBeGreaterThan(0);
    // ...and ended with the run, not at its next poll a second later (held its timer, listener and run).
    await new Promise((resolve) => setImmediate(resolve));
    expect([...pending.values()]).not.toContain(cancelSignal(job.id));
  });
});

describe("the runner's own failures", () => {
  it('keep the service frames out of the job and put them, without the message, in the service log', async () => {
    const lines: string[] = [];
    useLogger(createLogger({ format: 'json', write: (_level, line) => lines.push(line) }));
    const run = vi.spyOn(s.runner, 'run').mockResolvedValueOnce({
      ok: false,
      error: { name: 'RuntimeError', message: 'the runner failed: spawn EAGAIN with arg sekrit', stack: 'Error: the runner failed: spawn EAGAIN with arg sekrit\n    at spawnSandboxed (/srv/svc/functions/runtime/sandbox-process.ts:10:3)' },
    });
    try {
      const id = await (await s.fetch(`${ws}/jobs/run/p/u/admin/inc`, json({ n: 1 }))).text();
      await s.settled();
      const job = (await s.job(id)) as { status: string; result: { error: Record<string, unknown> } };
      expect(job.status).toBe('failed');
      expect(job.result.error).toEqual({ name: 'RuntimeError', message: 'the runner failed: spawn EAGAIN with arg sekrit' });
      const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'job failed in the runner');
      expect(logged).toMatchObject({ level: 'error', job_id: id, error: 'RuntimeError', frames: ['at spawnSandboxed (/srv/svc/functions/runtime/sandbox-process.ts:10:3)'] });
      expect(JSON.stringify(logged)).not.toContain('sekrit');
    } finally {
      run.mockRestore();
      useLogFormat('text');
    }
  });
});
