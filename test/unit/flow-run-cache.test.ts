import { describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { StoredDocumentError } from '../../functions/core/documents/parse.js';
import { createEntity, tryReplaceEntity } from '../../functions/core/store/entities.js';
import { newRun } from '../../functions/core/flows/advance.js';
import { readFlowJob, readFlowRun, rememberFlowRun } from '../../functions/core/flows/run-cache.js';
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
