import { MemoryStore } from '../../functions/adapters/memory/memory-store.js';
import { describeStoreContract } from './store.contract.js';

describeStoreContract('MemoryStore', async () => ({ store: new MemoryStore(), cleanup: async () => {} }));
