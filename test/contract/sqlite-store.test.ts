import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { describeStoreContract } from './store.contract.js';

describeStoreContract('SqliteStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-store-contract-'));
  const store = new SqliteStore(join(dir, 'svc.db'));
  return {
    store,
    cleanup: async () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
