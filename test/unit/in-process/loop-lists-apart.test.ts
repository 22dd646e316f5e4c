import { describe, expect, it, vi } from 'vitest';
import { flowRunCharsWritten, inProcessService, type InProcessService } from './harness.js';
import { putResultsApart } from '../../../functions/core/flows/results-apart.js';
import { copyRun, resolveRun, runDocument } from '../../../functions/core/flows/flow-run-document.js';
import { newRun } from '../../../functions/core/flows/flow-run-document.js';
import { scrubJobPayloads } from '../../../functions/core/jobs/scrub.js';
import type { FlowRun } from '../../../functions/core/flows/flow-documents.js';

/**
 * A loop's step keeps the ids of its iterations, which have ended and which may fail, and the run
 * lists the ids again for the console. Written with every turn, they made a long loop cost more
 * per iteration than a short one; the long lists are now kept apart once, and the stored step
 * holds which have ended only from the first open one. Every step of every iteration also walked
 * up to the top-level flow job, reading its arguments (the list looped over) each time.
 */
const step = { id: 'inner', value: { type: 'rawscript', language: 'bun', content: 'export function main(n: number) { return n + 1 }', input_transforms: { n: { type: 'javascript', expr: 'flow_input.iter.value' } } } };
const loop = { path: 'u/admin/long', value: { modules: [{ id: 'loop', value: { type: 'forloopflow', iterator: { type: 'javascript', expr: 'flow_input.items' }, skip_failures: false, modules: [step] } }] } };
const numbers = (n: number) => Array.from({ length: n }, (_, i) => i);

async function runLoop(n: number): Promise<{ s: InProcessService; id: string; perIteration: number }> {
  const s = await inProcessService();
  expect((await s.post('/api/w/main/flows/create', loop)).status).toBe(201);
  const written = flowRunCharsWritten(s);
  const id = await (await s.post('/api/w/main/jobs/run/p/u/admin/long', { items: numbers(n) })).text();
  const job = await s.job(id);
  expect(job).toMatchObject({ status: 'success', result: numbers(n).map((i) => i + 1) });
  expect(job.flow_status.module_jobs.loop).toHaveLength(n);
  return { s, id, perIteration: written() / n };
}

describe('a long sequential loop', () => {
  it('writes about as much per iteration as a short one', async () => {
    // Every turn wrote the ids (twice) and flags of all iterations: 400 wrote 8.4 times as much
    // per iteration as 20 did (40,211 characters against 4,764); now 1.05 times.
    const [short, long] = [(await runLoop(20)).perIteration, (await runLoop(400)).perIteration];
    expect(long).toBeLessThan(short * 1.3);
  });

  it('shows every iteration, keeps the list once and deletes it with the run', async () => {
    const { s, id } = await runLoop(300);
    const stored = (await s.store.getEntity('flow_run', 'main', id))!.value;
    expect(stored.child_jobs).toEqual({ loop: [] });
    const kept = await s.store.listEntities('flow_result', 'main');
    expect(kept).toHaveLength(1);
    expect(kept[0]!.value.value).toHaveLength(300);
    await scrubJobPayloads(s.store, { id, kind: 'flow', workspace_id: 'main' });
    expect(await s.store.listEntities('flow_result', 'main')).toEqual([]);
  });

  it("does not read the top-level flow job's arguments again for each iteration's step", async () => {
    const s = await inProcessService();
    expect((await s.post('/api/w/main/flows/create', loop)).status).toBe(201);
    const reads = vi.spyOn(s.store, 'getJob');
    const id = await (await s.post('/api/w/main/jobs/run/p/u/admin/long', { items: numbers(30) })).text();
    expect(await s.job(id)).toMatchObject({ status: 'success' });
    // 32 times before, about once per iteration, each a parse of the whole list.
    expect(reads.mock.calls.filter(([, job]) => job === id).length).toBeLessThan(5);
  });
});

describe("a children step's lists, stored and read back", () => {
  const ids = numbers(400).map((i) => `01900000-0000-7000-8000-${String(i).padStart(12, '0')}`);

  function loopRun(ended: boolean[], started: number, skips: boolean[]): FlowRun {
    const run = newRun('01900000-0000-7000-8000-ffffffffffff', 1, 'u/admin/long', [], { items: [] }, {});
    run.child_jobs = { loop: ids };
    run.step = { kind: 'children', module: 'loop', jobs: ids, created_at: '2030-01-01T00:00:00.000Z', parallel: true, started, ended, skip_failures: skips };
    return run;
  }

  const all = numbers(400).map(() => true);
  const mixed = numbers(400).map((i) => i % 3 === 0);
  it.each([
    ['sequential, the first 250 ended', numbers(400).map((i) => i < 250), 251, all],
    ['parallel, ended here and there', numbers(400).map((i) => i < 100 || (i < 140 && i % 2 === 0)), 140, all],
    ['none ended', numbers(400).map(() => false), 10, all],
    ['each with its own flag (a branchall)', numbers(400).map((i) => i < 5), 7, mixed],
  ])('%s: the document holds what is open, the run read back is the same', async (_, ended, started, skips) => {
    const s = await inProcessService();
    const run = loopRun(ended, started, skips);
    await putResultsApart(s.deps, 'main', run.flow_job, run, null);
    const doc = runDocument(run);
    const step = doc.step as Extract<FlowRun['step'], { kind: 'children' }>;
    expect([step.jobs, doc.child_jobs]).toEqual([[], { loop: [] }]);
    expect(step.skip_failures).toEqual(skips === all ? [] : skips);
    expect(step.ended.length).toBeLessThanOrEqual(started);
    expect(JSON.stringify(doc).length).toBeLessThan(skips === all ? 2_000 : 5_000);
    const read = await resolveRun(s.store, 'main', JSON.parse(JSON.stringify(doc)), null);
    expect(read.step).toEqual(run.step);
    expect(read.child_jobs).toEqual(run.child_jobs);

    // The next turn shares the lists, so they are not written again.
    const next = copyRun(run);
    (next.step as { ended: boolean[] }).ended[started - 1] = true;
    const writes = vi.spyOn(s.store, 'createEntity');
    await putResultsApart(s.deps, 'main', run.flow_job, next, run);
    expect(writes).not.toHaveBeenCalled();
    expect(next.lists_apart).toEqual(run.lists_apart);
  });
});
