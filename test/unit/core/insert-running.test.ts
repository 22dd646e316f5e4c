import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../functions/adapters/memory/memory-store.js';
import { insertRunningHere, queuedJob } from '../../../functions/core/jobs/jobs.js';
import { scriptJobTarget } from '../../../functions/core/jobs/run-target.js';
import type { Job, JobSlot } from '../../../functions/ports.js';
import { ManualClock } from '../in-process/harness.js';

/** A new job handed straight to a worker of this process (JobQueue.reserve), stored running. */
describe('insertRunningHere', () => {
  it('records the job as started when its worker was free, after any wait for it', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore();
    const handed: Job[] = [];
    const slot: JobSlot = { run: (job) => handed.push(job), cancel: () => undefined };
    // The worker frees up 120 ms after the job was made (the local pool lets a sync caller wait).
    const queue = {
      enqueue: () => Promise.resolve(),
      reserve: () =>
        new Promise<JobSlot>((resolve) => {
          clock.advance(120);
          resolve(slot);
        }),
    };
    const job = queuedJob(clock.now().toISOString(), { workspace_id: 'main', ...scriptJobTarget({ path: 'u/admin/s', hash: 'abc123', language: 'bun' }), parent_job: null, args: {}, created_by: 'admin' });

    const running = await insertRunningHere({ store, queue, clock }, job, { callerWaits: true, timeoutMs: 60_000 });

    expect(running?.status).toBe('running');
    const stored = await store.getJob('main', job.id);
    expect(Date.parse(stored!.started_at!) - Date.parse(stored!.created_at)).toBe(120);
    expect(handed.map((j) => j.id)).toEqual([job.id]);
  });
});
