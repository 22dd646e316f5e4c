import { describe, expect, it } from 'vitest';
import { ApiJobRunner, OUTCOME_MARGIN_MS } from '../../../functions/adapters/aws/api-job-runner.js';
import type { WorkerDeps } from '../../../functions/core/deps.js';

/**
 * Which jobs the AWS api function runs itself: only those whose caller waits, inside an
 * invocation that can hold them to their end (timeout plus the margin to store the outcome).
 */

const runner = (): ApiJobRunner => {
  const jobs = new ApiJobRunner();
  // Deciding needs no dependency; nothing here runs a job.
  jobs.start({} as WorkerDeps);
  return jobs;
};
const waits = (timeoutMs: number) => ({ callerWaits: true, timeoutMs });
const job = (id: string) => ({ id, workspace_id: 'main' });

describe('ApiJobRunner.reserve', () => {
  it('takes an awaited job that fits in the invocation, with the margin to store its outcome', async () => {
    const jobs = runner();
    const slot = await jobs.within(() => 60_000 + OUTCOME_MARGIN_MS, async () => jobs.reserve(job('a'), waits(60_000)));
    expect(slot).not.toBeNull();
  });

  it('leaves to the queue a job that does not fit, one nobody waits for, and one outside an invocation', async () => {
    const jobs = runner();
    expect(await jobs.within(() => 60_000 + OUTCOME_MARGIN_MS - 1, async () => jobs.reserve(job('a'), waits(60_000)))).toBeNull();
    expect(await jobs.within(() => 900_000, async () => jobs.reserve(job('b'), { callerWaits: false, timeoutMs: 1_000 }))).toBeNull();
    expect(jobs.reserve(job('c'), waits(1_000))).toBeNull();
  });

  it('has nothing to run before the core is attached', async () => {
    const jobs = new ApiJobRunner();
    expect(await jobs.within(() => 900_000, async () => jobs.reserve(job('a'), waits(1_000)))).toBeNull();
  });
});
