import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileBlobStore } from '../../functions/adapters/local/file-blob-store.js';
import { describeBlobStoreContract } from './blob-store.contract.js';

describeBlobStoreContract(
  'FileBlobStore',
  async () => {
    // The store and its neighbour are sibling directories, as `objects` sits next to the rest of the data dir.
    const dir = mkdtempSync(join(tmpdir(), 'svc-blob-contract-'));
    return {
      blobs: new FileBlobStore(join(dir, 'objects')),
      neighbour: new FileBlobStore(join(dir, 'neighbour')),
      neighbourName: 'neighbour',
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
);
