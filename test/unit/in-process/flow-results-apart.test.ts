import { describe, expect, it, vi } from 'vitest';
import { flowRunCharsWritten, inProcessService, loseFirstInsertOf, type InProcessService } from './harness.js';
import { advanceFlow } from '../../../functions/core/flows/advance.js';
import { scrubJobPayloads } from '../../../functions/core/jobs/scrub.js';
import type { WorkerDeps } from '../../../functions/core/deps.js';

/**
 * A flow run is stored again at each turn; a large step result is kept apart from it, once, so the
 * steps after it cost what they would without it. The run as read (by the next turn, another
 * process, the API) still has every result.
 */
const BIG = 50_000;
const big = { id: 'big', value: { type: 'rawscript', language: 'bun', content: `export function main() { return { rows: "x".repeat(${BIG}) } }`, input_transforms: {} } };
const step = (id: string, expr: string) => ({ id, value: { type: 'rawscript', language: 'bun', content: 'export function main(n: number) { return n + 1 }', input_transforms: { n: { type: 'javascript', expr } } } });

/** A flow: the big result, then `after` steps; the first reads it as `previous_result`, the last as `results.big`. */
function flowWith(path: string, after: number) {
  const rest = Array.from({ length: after }, (_, i) => step(`s${i}`, i === 0 ? 'previous_result.rows.length' : i === after - 1 ? 'results.big.rows.length' : `results.s${i - 1}`));
  return { path, value: { modules: [big, ...rest] } };
}

describe('a large step result', () => {
  it('is stored once, not with every later turn of its run, and every step and the API still see it', async () => {
    const s = await inProcessService();
    expect((await s.post('/api/w/main/flows/create', flowWith('u/admin/big', 10))).status).toBe(201);
    const written = flowRunCharsWritten(s);
    const id = await (await s.post('/api/w/main/jobs/run/p/u/admin/big', {})).text();
    const job = await s.job(id);
    expect(job).toMatchObject({ status: 'success', result: BIG + 1 });
    expect(job.flow_status.results.s0).toBe(BIG + 1);
    // Eleven turns after the result: written with each, it was over 550,000 characters.
    expect(written()).toBeLessThan(BIG);
    expect(job.flow_status.results.big.rows).toHaveLength(BIG);
    expect((await s.store.listEntities('flow_result', 'main')).length).toBe(1);
  });

  it('is read back with its run by a turn that did not write it (another process)', async () => {
    const s = await inProcessService();
    expect((await s.post('/api/w/main/flows/create', flowWith('u/admin/again', 3))).status).toBe(201);
    loseFirstInsertOf(s, 's2', 'stopped here');
    const id = await (await s.post('/api/w/main/jobs/run/p/u/admin/again', {})).text();
    await expect(s.settled()).rejects.toThrow('stopped here');
    // Written again as it is: this process no longer knows the stored run as its own.
    const current = (await s.store.getEntity('flow_run', 'main', id))!;
    expect(current.value).not.toHaveProperty('results.big');
    expect(await s.store.replaceEntity({ ...current, version: current.version + 1 }, current.version)).toBe(true);

    await advanceFlow(s.deps as WorkerDeps, 'main', id);
    expect(await s.job(id)).toMatchObject({ status: 'success', result: BIG + 1 });
  });

  it('goes with its run when the run is scrubbed', async () => {
    const s = await inProcessService();
    expect((await s.post('/api/w/main/flows/create', flowWith('u/admin/gone', 2))).status).toBe(201);
    const id = await (await s.post('/api/w/main/jobs/run/p/u/admin/gone', {})).text();
    const job = await s.job(id);
    expect(job.status).toBe('success');
    expect((await s.store.listEntities('flow_result', 'main')).length).toBe(1);
    await scrubJobPayloads(s.store, { id, kind: 'flow', workspace_id: 'main' });
    expect(await s.store.getEntity('flow_run', 'main', id)).toBeNull();
    expect(await s.store.listEntities('flow_result', 'main')).toEqual([]);
  });
});

describe("a loop over the flow's input", () => {
  const inner = step('inner', 'flow_input.iter.value.i + flow_input.items.length');
  const flow = { path: 'u/admin/items', value: { modules: [{ id: 'loop', value: { type: 'forloopflow', iterator: { type: 'javascript', expr: 'flow_input.items' }, skip_failures: false, modules: [inner] } }] } };
  const itemsOf = (n: number) => Array.from({ length: n }, (_, i) => ({ i, text: 'x'.repeat(1000) }));

  /** Characters of flow runs written per iteration of a loop over `n` items of 1 KB. */
  async function perIteration(n: number): Promise<number> {
    const s = await inProcessService();
    expect((await s.post('/api/w/main/flows/create', flow)).status).toBe(201);
    const written = flowRunCharsWritten(s);
    const id = await (await s.post('/api/w/main/jobs/run/p/u/admin/items', { items: itemsOf(n) })).text();
    expect(await s.job(id)).toMatchObject({ status: 'success', result: itemsOf(n).map((item) => item.i + n + 1) });
    return written() / n;
  }

  it('costs the same per iteration however long the input is', async () => {
    // Each iteration's run, and the flow's run at each turn, held the whole input: 40 items wrote
    // 3.6 times as much per iteration as 10 did (173,369 characters against 48,432). What still
    // grows is the flow's list of its iterations' ids, written at each of its turns (1.4 times).
    const [ten, forty] = [await perIteration(10), await perIteration(40)];
    expect(forty).toBeLessThan(ten * 1.6);
  });

  it('is stored once: iterations name it, their jobs hold only `iter`, their steps see it whole', async () => {
    const s = await inProcessService();
    expect((await s.post('/api/w/main/flows/create', flow)).status).toBe(201);
    const items = itemsOf(20);
    const id = await (await s.post('/api/w/main/jobs/run/p/u/admin/items', { items })).text();
    const job = await s.job(id);
    expect(job).toMatchObject({ status: 'success', result: items.map((item) => item.i + 20 + 1) });
    const iterations = job.flow_status.module_jobs.loop as string[];
    expect(iterations).toHaveLength(20);
    expect((await s.job(iterations[1]!)).args).toEqual({ iter: { index: 1, value: items[1] } });
    const stored = (await s.store.getEntity('flow_run', 'main', iterations[1]!))!.value;
    expect(stored.flow_input).toEqual({ iter: { index: 1, value: items[1] } });
    expect(stored.input_from).toEqual({ job: id, keys: ['iter'] });
    // The flow's own run names its input, kept apart; the flow job keeps its arguments as they came.
    expect((await s.store.getEntity('flow_run', 'main', id))!.value.flow_input).toEqual({});
    expect(job.args).toEqual({ items });
  });
});

describe('a while loop of large results (pages of an API)', () => {
  const page = { id: 'page', value: { type: 'rawscript', language: 'bun', content: 'export function main(n: number) { return { n, rows: "p".repeat(10000) } }', input_transforms: { n: { type: 'javascript', expr: 'flow_input.iter.index' } } } };
  const flowOf = (pages: number) => ({
    path: `u/admin/pages${pages}`,
    value: {
      modules: [
        { id: 'pages', value: { type: 'whileloopflow', skip_failures: false, modules: [page] }, stop_after_if: { expr: `result.n >= ${pages - 1}` } },
        step('count', 'results.pages.length'),
      ],
    },
  });

  async function run(pages: number): Promise<{ s: InProcessService; id: string; perPage: number }> {
    const s = await inProcessService();
    expect((await s.post('/api/w/main/flows/create', flowOf(pages))).status).toBe(201);
    const written = flowRunCharsWritten(s);
    const id = await (await s.post(`/api/w/main/jobs/run/p/u/admin/pages${pages}`, {})).text();
    const job = await s.job(id);
    expect(job).toMatchObject({ status: 'success', result: pages + 1 });
    expect(job.flow_status.results.pages.map((p: { n: number }) => p.n)).toEqual(Array.from({ length: pages }, (_, i) => i));
    return { s, id, perPage: written() / pages };
  }

  it('writes each page once, not again with every later iteration', async () => {
    // The step kept every page so far and was written at each turn: 24 pages wrote 4 times as
    // much per page as 6 did.
    const [six, many] = [(await run(6)).perPage, (await run(24)).perPage];
    expect(many).toBeLessThan(six * 1.3);
  });

  it('deletes every page it kept apart when its run is scrubbed', async () => {
    const { s, id } = await run(5);
    // The pages kept while the loop went on (the last one ends it, into its list) and the list.
    expect((await s.store.listEntities('flow_result', 'main')).length).toBe(5);
    await scrubJobPayloads(s.store, { id, kind: 'flow', workspace_id: 'main' });
    expect(await s.store.listEntities('flow_result', 'main')).toEqual([]);
  });
});

