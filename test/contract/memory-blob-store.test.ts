import { MemoryBlobStore } from '../../functions/adapters/memory/memory-blob-store.js';
import { describeBlobStoreContract } from './blob-store.contract.js';

describeBlobStoreContract('MemoryBlobStore', async () => ({
  blobs: new MemoryBlobStore(),
  neighbour: new MemoryBlobStore(),
  neighbourName: 'neighbour',
  cleanup: async () => {},
}));
