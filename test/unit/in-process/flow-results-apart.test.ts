import { describe, expect, it, vi } from 'vitest';
import { inProcessService, loseFirstInsertOf, type InProcessService } from './harness.js';
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

/** Characters of flow run documents written (created or replaced) from now on. */
function runBytesWritten(s: InProcessService): () => number {
  let chars = 0;
  const count = (e: { kind: string; value: unknown }) => {
    if (e.kind === 'flow_run') chars += JSON.stringify(e.value).length;
  };
  const create = s.store.createEntity.bind(s.store);
  const replace = s.store.replaceEntity.bind(s.store);
  vi.spyOn(s.store, 'createEntity').mockImplementation((e, ...rest) => (count(e), create(e, ...rest)));
  vi.spyOn(s.store, 'replaceEntity').mockImplementation((e, ...rest) => (count(e), replace(e, ...rest)));
  return () => chars;
}

describe('a large step result', () => {
  it('is stored once, not with every later turn of its run, and every step and the API still see it', async () => {
    const s = await inProcessService();
    expect((await s.post('/api/w/main/flows/create', flowWith('u/admin/big', 10))).status).toBe(201);
    const written = runBytesWritten(s);
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
