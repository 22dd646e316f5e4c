import { describe, expect, it } from 'vitest';
import { inProcessService, loseFirstInsertOf } from './harness.js';
import { advanceFlow } from '../../../functions/core/flows/advance.js';
import type { WorkerDeps } from '../../../functions/core/deps.js';

/**
 * The flow interpreter stores the run naming a step's job with the job; a store may write the job
 * just after the run (DynamoDB does, Store.replaceEntity). A process that dies between the two
 * leaves a run waiting on a job that does not exist; the next look at the flow (a restart, a wake)
 * inserts it, once, and the flow goes on. New step jobs are inserted
 * without first reading whether they exist (their ids are new), so this path is the one that
 * still checks.
 */
describe('a flow step lost between storing the run and inserting the job', () => {
  it('is inserted by the next look at the flow, runs once, and the flow finishes', async () => {
    const s = await inProcessService();
    const flow = {
      path: 'u/admin/two',
      value: {
        modules: [
          { id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1 }', input_transforms: {} } },
          { id: 'b', value: { type: 'rawscript', language: 'bun', content: 'export function main(n: number) { return n + 1 }', input_transforms: { n: { type: 'javascript', expr: 'results.a' } } } },
        ],
      },
    };
    expect((await s.post('/api/w/main/flows/create', flow)).status).toBe(201);

    // The process "dies" when inserting step b: the run already names it, the store never gets it.
    const lostJob = loseFirstInsertOf(s, 'b', 'the process died here');
    const id = await (await s.post('/api/w/main/jobs/run/p/u/admin/two', {})).text();
    await expect(s.settled()).rejects.toThrow('the process died here');
    const lost = lostJob();
    expect(lost).toBeDefined();
    expect(await s.store.getJob('main', lost!.id)).toBeNull();
    expect((await s.job(id)).status).toBe('running');

    // The next look inserts the job the run names; a further look does not insert it again.
    await advanceFlow(s.deps as WorkerDeps, 'main', id);
    await advanceFlow(s.deps as WorkerDeps, 'main', id);
    const finished = await s.job(id);
    expect(finished).toMatchObject({ status: 'success', result: 2 });
    expect(s.runner.requests.filter((r) => r.jobId === lost!.id)).toHaveLength(1);
  });
});
