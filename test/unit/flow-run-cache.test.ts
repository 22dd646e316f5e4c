import { describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { StoredDocumentError } from '../../functions/core/documents/parse.js';
import { createEntity, tryReplaceEntity } from '../../functions/core/store/entities.js';
import { newRun } from '../../functions/core/flows/advance.js';
import { readFlowRun, rememberFlowRun } from '../../functions/core/flows/run-cache.js';
import { aWorkspace } from '../contract/store-fixtures.js';

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
