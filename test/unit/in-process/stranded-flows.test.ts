import { describe, expect, it } from 'vitest';
import { endStrandedFlow, reconcileFlowJobs, STRANDED_FLOW_ERRORS, type ExecutionLookup, type ExecutionOutcome } from '../../../functions/core/flows/stranded.js';
import type { Job } from '../../../functions/ports.js';
import { aJob } from '../../contract/store-fixtures.js';
import { inProcessService } from './harness.js';

/**
 * The rules for a flow whose execution ended under it (the shells learn of it from Step Functions'
 * status events or a reconcile): only a running flow job is ended, with an error naming how its
 * execution ended; a finished one keeps its outcome; the reconcile looks only at flow jobs old
 * enough to have an execution.
 */

const minutesAgo = (now: Date, m: number) => new Date(now.getTime() - m * 60_000).toISOString();

async function setUp() {
  const s = await inProcessService();
  const flowJob = async (overrides: Partial<Job> = {}) => {
    const job = aJob('main', { kind: 'flow', script_path: 'u/admin/f', status: 'running', created_at: minutesAgo(s.clock.now(), 10), started_at: minutesAgo(s.clock.now(), 10), ...overrides });
    await s.deps.store.insertJob(job);
    return job;
  };
  return { s, flowJob };
}

const aborted: ExecutionOutcome = { status: 'ABORTED', execution: 'u-admin-f-1', error: null, cause: 'stopped by an operator' };

describe('a flow job whose execution ended under it', () => {
  it('is failed with the way its execution ended, named in the message', async () => {
    const { s, flowJob } = await setUp();
    const job = await flowJob();
    expect(await endStrandedFlow(s.deps, 'main', job.id, aborted)).toBe(true);
    const ended = await s.deps.store.getJob('main', job.id);
    expect(ended).toMatchObject({ status: 'failed', success: false });
    expect(ended?.result).toEqual({ error: { name: STRANDED_FLOW_ERRORS.ABORTED, message: expect.stringContaining('u-admin-f-1 was stopped (stopped by an operator)') } });
    // A second event for the same execution changes nothing.
    expect(await endStrandedFlow(s.deps, 'main', job.id, { ...aborted, status: 'FAILED' })).toBe(false);
    expect((await s.deps.store.getJob('main', job.id))?.result).toEqual(ended?.result);
  });

  it('keeps the outcome of a flow that finished first, and leaves script jobs alone', async () => {
    const { s, flowJob } = await setUp();
    const done = await flowJob({ status: 'success', success: true, result: 42, completed_at: minutesAgo(s.clock.now(), 1) });
    expect(await endStrandedFlow(s.deps, 'main', done.id, aborted)).toBe(false);
    expect(await s.deps.store.getJob('main', done.id)).toMatchObject({ status: 'success', result: 42 });
    const script = await flowJob({ kind: 'script' });
    expect(await endStrandedFlow(s.deps, 'main', script.id, aborted)).toBe(false);
    expect((await s.deps.store.getJob('main', script.id))?.status).toBe('running');
  });
});

describe('the reconcile', () => {
  it('ends the running flow jobs whose latest execution ended, and only those', async () => {
    const { s, flowJob } = await setUp();
    const timedOut = await flowJob();
    const stillRunning = await flowJob();
    const noExecutionYet = await flowJob();
    const young = await flowJob({ started_at: s.clock.now().toISOString() });
    const script = await flowJob({ kind: 'script' });
    const looked: string[] = [];
    const lookup: ExecutionLookup = async (job) => {
      looked.push(job.id);
      if (job.id === timedOut.id) return { status: 'TIMED_OUT', execution: 'u-admin-f-2', error: 'States.Timeout' };
      if (job.id === stillRunning.id) return 'running';
      return job.id === noExecutionYet.id ? null : { status: 'FAILED', execution: 'never', error: 'looked at by mistake' };
    };

    expect(await reconcileFlowJobs(s.deps, lookup, { olderThanMs: 60_000, batch: 100 })).toEqual([timedOut.id]);
    expect(looked.sort()).toEqual([timedOut.id, stillRunning.id, noExecutionYet.id].sort());
    expect((await s.deps.store.getJob('main', timedOut.id))?.result).toEqual({ error: { name: 'FlowExecutionTimedOut', message: expect.stringContaining('reached its time limit (States.Timeout)') } });
    for (const job of [stillRunning, noExecutionYet, young, script]) expect((await s.deps.store.getJob('main', job.id))?.status).toBe('running');
  });
});
