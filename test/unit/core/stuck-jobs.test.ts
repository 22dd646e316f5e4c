import { describe, expect, it } from 'vitest';
import type { CoreDeps } from '../../../functions/core/deps.js';
import { failUndeliverable, reapStuckJobs, STUCK_JOB_ERRORS } from '../../../functions/core/runs/stuck-jobs.js';
import { InProcessJobSignals } from '../../../functions/adapters/in-process-job-signals.js';
import { MemoryStore } from '../../../functions/adapters/memory/memory-store.js';
import type { Job } from '../../../functions/ports.js';
import { aJob, FAR_FUTURE } from '../../contract/store-fixtures.js';

/** The rules of stuck jobs on the in-memory store, at a fixed time: 12:00 on a day in 2031. */
const NOW = Date.UTC(2031, 5, 1, 12, 0);
const minutesAgo = (m: number) => new Date(NOW - m * 60_000).toISOString();
const LIMITS = { queuedMs: 60 * 60_000, runningMs: 30 * 60_000, batch: 10 };

function service() {
  const store = new MemoryStore();
  const wakes: string[] = [];
  const deps = {
    store,
    clock: { now: () => new Date(NOW) },
    signals: new InProcessJobSignals({ holdProcess: false }),
    flows: { wake: async (_ws: string, flowJobId: string) => void wakes.push(flowJobId) },
  } as unknown as CoreDeps;
  return { store, deps, wakes };
}

async function insert(store: MemoryStore, job: Job, startedMinutesAgo?: number): Promise<Job> {
  await store.insertJob(job);
  if (startedMinutesAgo !== undefined) await store.claimJob(job.id, minutesAgo(startedMinutesAgo), FAR_FUTURE);
  return job;
}

describe('reaper', () => {
  it('fails jobs queued past the limit and jobs running past theirs, with the reason; leaves younger ones alone', async () => {
    const { store, deps } = service();
    const lost = await insert(store, aJob('ws', { created_at: minutesAgo(61) }));
    const waiting = await insert(store, aJob('ws', { created_at: minutesAgo(59) }));
    const orphan = await insert(store, aJob('ws', { created_at: minutesAgo(40), logs: '' }), 31);
    const working = await insert(store, aJob('ws', { created_at: minutesAgo(40) }), 29);

    expect(await reapStuckJobs(deps, LIMITS)).toEqual({ neverStarted: [lost.id], workerLost: [orphan.id] });

    expect(await store.getJob('ws', lost.id)).toMatchObject({ status: 'failed', success: false, result: { error: { name: STUCK_JOB_ERRORS.neverStarted, message: expect.stringContaining('still queued 60 minutes') } } });
    expect(await store.getJob('ws', orphan.id)).toMatchObject({ status: 'failed', result: { error: { name: STUCK_JOB_ERRORS.workerLost, message: expect.stringContaining('its worker was lost') } } });
    expect((await store.getJob('ws', waiting.id))?.status).toBe('queued');
    expect((await store.getJob('ws', working.id))?.status).toBe('running');
    // A second pass finds nothing more.
    expect(await reapStuckJobs(deps, LIMITS)).toEqual({ neverStarted: [], workerLost: [] });
  });

  it('fails a flow whose execution never started, but never a running flow (its execution may wait a year)', async () => {
    const { store, deps } = service();
    const neverStarted = await insert(store, aJob('ws', { kind: 'flow', created_at: minutesAgo(120) }));
    const waitingFlow = await insert(store, aJob('ws', { kind: 'flow', created_at: minutesAgo(600) }), 590);
    expect(await reapStuckJobs(deps, LIMITS)).toEqual({ neverStarted: [neverStarted.id], workerLost: [] });
    expect((await store.getJob('ws', waitingFlow.id))?.status).toBe('running');
  });

  it("wakes a reaped step's flow, so the flow goes on instead of waiting out its step", async () => {
    const { store, deps, wakes } = service();
    const step = await insert(store, aJob('ws', { kind: 'flowstep', parent_job: 'flow-1', created_at: minutesAgo(90) }), 45);
    await reapStuckJobs(deps, LIMITS);
    expect((await store.getJob('ws', step.id))?.status).toBe('failed');
    expect(wakes).toEqual(['flow-1']);
  });

  it('fails at most `batch` jobs of each status per pass, oldest first', async () => {
    const { store, deps } = service();
    const jobs = [];
    for (let m = 0; m < 3; m++) jobs.push(await insert(store, aJob('ws', { created_at: minutesAgo(100 - m) })));
    expect((await reapStuckJobs(deps, { ...LIMITS, batch: 2 })).neverStarted).toEqual([jobs[0].id, jobs[1].id]);
  });
});

describe('undeliverable jobs', () => {
  it('fails an unfinished job with the number of deliveries, keeping what it logged', async () => {
    const { store, deps } = service();
    const job = await insert(store, aJob('ws', { created_at: minutesAgo(5) }), 4);
    expect(await failUndeliverable(deps, 'ws', job.id, 3)).toBe(true);
    expect(await store.getJob('ws', job.id)).toMatchObject({
      status: 'failed',
      result: { error: { name: STUCK_JOB_ERRORS.undeliverable, message: expect.stringContaining('3 deliveries to a worker failed') } },
    });
  });

  it('leaves a finished job as it is, and ignores a job that does not exist', async () => {
    const { store, deps } = service();
    const job = await insert(store, aJob('ws', { created_at: minutesAgo(5) }), 4);
    await store.completeJob(job.id, { status: 'success', result: 42, logs: 'done' }, minutesAgo(1));
    expect(await failUndeliverable(deps, 'ws', job.id, 3)).toBe(false);
    expect(await store.getJob('ws', job.id)).toMatchObject({ status: 'success', result: 42 });
    expect(await failUndeliverable(deps, 'ws', 'no-such-job', 3)).toBe(false);
  });
});
