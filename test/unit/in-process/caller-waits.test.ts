import { beforeAll, describe, expect, it } from 'vitest';
import type { JobRef, RunIntent } from '../../../functions/ports.js';
import { createScript, inProcessService, json, type InProcessService } from './harness.js';

/**
 * What the core tells the queue about a new job (JobQueue.reserve): whether its caller waits for
 * the outcome and how long the run may take. The AWS api function runs a job itself only on that
 * word (adapters/aws/api-job-runner.ts), so a sync webhook's or SSE stream's job is billed there
 * and in the sandbox, and nowhere else.
 */

let s: InProcessService;
const asked: Array<{ jobId: string; intent: RunIntent }> = [];
const ws = '/api/w/main';

beforeAll(async () => {
  s = await inProcessService({ config: { jobTimeoutMs: 120_000 } });
  // The memory queue has no workers to hand out: the spy only listens, and the job is queued as usual.
  Object.assign(s.deps.queue, {
    reserve: (job: JobRef, intent: RunIntent) => {
      asked.push({ jobId: job.id, intent });
      return null;
    },
  });
  await createScript(s, 'u/admin/quick', 'export function main() { return 1; }', { timeout: 5 });
  await createScript(s, 'u/admin/open', 'export function main() { return 2; }');
});

async function intentFor(run: () => Promise<Response>): Promise<RunIntent> {
  const before = asked.length;
  const res = await run();
  await res.arrayBuffer();
  await s.settled();
  expect(asked.length).toBe(before + 1);
  return asked[before].intent;
}

describe('the caller-waits intent of a new job', () => {
  it('is set for sync webhooks and SSE streams, with the script timeout', async () => {
    expect(await intentFor(() => s.fetch(`${ws}/jobs/run_wait_result/p/u/admin/quick`, json({})))).toEqual({ callerWaits: true, timeoutMs: 5_000 });
    expect(await intentFor(() => s.fetch(`${ws}/jobs/run_and_stream/p/u/admin/quick`, json({})))).toEqual({ callerWaits: true, timeoutMs: 5_000 });
  });

  it('is not set for async runs; a script without a timeout gets the instance job timeout', async () => {
    expect(await intentFor(() => s.fetch(`${ws}/jobs/run/p/u/admin/open`, json({})))).toEqual({ callerWaits: false, timeoutMs: 120_000 });
    expect(await intentFor(() => s.fetch(`${ws}/jobs/run_wait_result/p/u/admin/open`, json({})))).toEqual({ callerWaits: true, timeoutMs: 120_000 });
  });
});
