import { setFlagsFromString, getHeapStatistics } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { StoredDocumentError } from '../../functions/core/documents/parse.js';
import { createEntity, tryReplaceEntity } from '../../functions/core/store/entities.js';
import { newRun } from '../../functions/core/flows/flow-run-document.js';
import { MAX_CACHED_CHARS, readFlowJob, readFlowRun, rememberFlowRun, runCacheChars, setRunCacheBudget } from '../../functions/core/flows/run-cache.js';
import { runDocument } from '../../functions/core/flows/flow-run-document.js';
import { aJob, aWorkspace, FAR_FUTURE, nextTimestamp } from '../contract/store-fixtures.js';

const clock = { now: () => new Date('2030-01-01T00:00:00.000Z') };
let tick = 0;
const later = { now: () => new Date(Date.parse('2030-01-01T00:00:00.000Z') + ++tick * 1000) };

describe('the flow runs this process wrote last', () => {
  it('are read back as written while the stored version is theirs, and from the store once someone else wrote', async () => {
    const store = new SqliteStore(':memory:');
    try {
      await store.createWorkspace({ ...aWorkspace(), id: 'ws' });
      const run = newRun('f1', 1, 'f/a/flow', [], {}, {});
      const written = await createEntity(store, clock, 'flow_run', 'ws', 'f1', run, 'run');
      rememberFlowRun({ ...written, value: run });
      // Its stamp says it is still the stored write: the document is not read again.
      const reads = vi.spyOn(store, 'getEntity');
      expect((await readFlowRun(store, 'ws', 'f1'))?.value).toBe(run);
      expect(reads).not.toHaveBeenCalled();

      // Another process moves the run on: its version is read and parsed, not the remembered one.
      const theirs = await tryReplaceEntity(store, later, written, { ...written.value, index: 3 });
      expect(theirs).not.toBeNull();
      const read = await readFlowRun(store, 'ws', 'f1');
      expect(read?.value.index).toBe(3);
      expect(read?.version).toBe(2);

      // And a document another writer broke is the usual clear error, not the remembered run.
      await store.replaceEntity({ ...theirs!, value: { status: 'bogus' }, version: 3 }, 2);
      await expect(readFlowRun(store, 'ws', 'f1')).rejects.toThrow(StoredDocumentError);
    } finally {
      store.close();
    }
  });
});

describe('the flow jobs whose turns this process took', () => {
  it('are read whole once, then only their status, and whole again once it changed (a cancel)', async () => {
    const store = new SqliteStore(':memory:');
    try {
      await store.createWorkspace({ ...aWorkspace(), id: 'ws' });
      const queued = aJob('ws', { kind: 'flow', script_hash: null, flow_version: 1, language: 'bun', args: { n: 1 } });
      await store.insertJob(queued);
      const running = (await store.claimJob(queued.id, nextTimestamp(), FAR_FUTURE))!;
      const whole = vi.spyOn(store, 'getJob');
      const first = await readFlowJob(store, 'ws', running.id);
      expect(first).toEqual(running);
      // Each later turn: the same record, the store asked for the status alone. It was read whole
      // at every turn before.
      for (let turn = 0; turn < 5; turn++) expect(await readFlowJob(store, 'ws', running.id)).toBe(first);
      expect(whole).toHaveBeenCalledTimes(1);
      // Shared by every turn, it cannot be changed by one.
      expect(() => Object.assign(first!, { status: 'success' })).toThrow(TypeError);

      await store.completeJob(running.id, { status: 'canceled', result: { error: { name: 'Canceled', message: 'by alice' } }, logs: '' }, nextTimestamp());
      expect(await readFlowJob(store, 'ws', running.id)).toMatchObject({ status: 'canceled', result: { error: { message: 'by alice' } } });
      expect(await readFlowJob(store, 'ws', running.id)).toMatchObject({ status: 'canceled' });
      expect(whole).toHaveBeenCalledTimes(3);
      expect(await readFlowJob(store, 'other', running.id)).toBeNull();
    } finally {
      store.close();
    }
  });
});

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
/** The V8 heap in use once garbage is collected. */
function heapInUse(): number {
  collect();
  collect();
  return getHeapStatistics().used_heap_size;
}

/** Runs `test` on a store of its own with workspace `ws`, closed after. */
async function withStore(test: (store: SqliteStore) => Promise<void>): Promise<void> {
  const store = new SqliteStore(':memory:');
  try {
    await store.createWorkspace({ ...aWorkspace(), id: 'ws' });
    await test(store);
  } finally {
    store.close();
  }
}

/** The input of a flow a member started: about `chars` characters of JSON, made of strings of its own. */
function largeInput(flow: number, chars: number): Record<string, unknown> {
  return { rows: Array.from({ length: Math.ceil(chars / 1000) }, (_, i) => `${flow}:${i}:`.padEnd(990, 'x')) };
}

/** A flow job running with `args`, read by its turn, and its run, holding that input (kept apart, as large ones are), written by the turn. */
async function unfinishedFlow(store: SqliteStore, args: Record<string, unknown>): Promise<string> {
  const queued = aJob('ws', { kind: 'flow', script_hash: null, flow_version: 1, language: 'bun', args });
  await store.insertJob(queued);
  const running = (await store.claimJob(queued.id, nextTimestamp(), FAR_FUTURE))!;
  const job = (await readFlowJob(store, 'ws', running.id))!;
  const run = { ...newRun(running.id, 1, 'f/a/flow', [], job.args!, {}), status: 'awaiting_approval' as const, input_apart: `${running.id}/input` };
  await createEntity(store, clock, 'flow_result', 'ws', run.input_apart, { value: args }, 'result');
  const written = await createEntity(store, clock, 'flow_run', 'ws', running.id, runDocument(run), 'run');
  rememberFlowRun({ ...written, value: run });
  return running.id;
}

describe('what the flow runs and jobs of this process hold together', () => {
  afterEach(() => setRunCacheBudget());

  it('stays within its budget, however many unfinished flows have large inputs', () =>
    withStore(async (store) => {
      setRunCacheBudget();
      const before = heapInUse();
      // 40 flows waiting for an approval, each with 1 MB of input: every one was kept (40 MB and
      // more of this process's heap), as a thousand would have been.
      const ids: string[] = [];
      for (let flow = 0; flow < 40; flow++) ids.push(await unfinishedFlow(store, largeInput(flow, 1_000_000)));
      expect(runCacheChars()).toBeLessThanOrEqual(MAX_CACHED_CHARS);
      expect(heapInUse() - before).toBeLessThan(28 * 1024 * 1024);

      // The newest are still taken from the cache; the oldest are read from the store, whole.
      const reads = vi.spyOn(store, 'getJob');
      expect((await readFlowJob(store, 'ws', ids[39]!))?.args).toEqual(largeInput(39, 1_000_000));
      expect(reads).not.toHaveBeenCalled();
      expect((await readFlowJob(store, 'ws', ids[0]!))?.args).toEqual(largeInput(0, 1_000_000));
      expect(reads).toHaveBeenCalledTimes(1);
      expect((await readFlowRun(store, 'ws', ids[0]!))?.value.flow_input).toEqual(largeInput(0, 1_000_000));
    }));

  it('drops the flows that wait before the one whose turns go on', () =>
    withStore(async (store) => {
      // Room for about three flows' jobs and runs of 100 KB each.
      setRunCacheBudget(650_000);
      const going = await unfinishedFlow(store, largeInput(0, 100_000));
      const reads = vi.spyOn(store, 'getJob');
      for (let flow = 1; flow <= 6; flow++) {
        await unfinishedFlow(store, largeInput(flow, 100_000));
        // A turn of the first flow between each start of another.
        expect((await readFlowJob(store, 'ws', going))?.args).toEqual(largeInput(0, 100_000));
      }
      // Each of its turns found it kept: only the six new flows' jobs were read (by their own turns).
      expect(reads.mock.calls.filter(([, id]) => id === going)).toEqual([]);
      expect(runCacheChars()).toBeLessThanOrEqual(650_000);
    }));

  it('keeps no job or run larger than the budget, and their turns read them from the store', () =>
    withStore(async (store) => {
      setRunCacheBudget(100_000);
      const id = await unfinishedFlow(store, largeInput(1, 200_000));
      expect(runCacheChars()).toBe(0);
      const reads = vi.spyOn(store, 'getJob');
      for (let turn = 0; turn < 3; turn++) expect((await readFlowJob(store, 'ws', id))?.args).toEqual(largeInput(1, 200_000));
      expect(reads).toHaveBeenCalledTimes(3);
      expect(runCacheChars()).toBe(0);
    }));
});
