import type { Clock, Store } from '../ports.js';
import { conflict } from './errors.js';

/** Instance-wide counters (flow version ids) on top of the Store's versioned entities. */

/** Not a workspace id (those never start with `_`), so counters never mix with workspace data. */
const INSTANCE = '_instance';
const ATTEMPTS = 50;

export async function nextSequence(store: Store, clock: Clock, name: string): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const now = clock.now().toISOString();
    const current = await store.getEntity('sequence', INSTANCE, name);
    if (!current) {
      if (await store.createEntity({ kind: 'sequence', workspace_id: INSTANCE, key: name, value: { last: 1 }, version: 1, created_at: now, updated_at: now })) return 1;
      continue;
    }
    const next = (current.value as { last: number }).last + 1;
    if (await store.replaceEntity({ ...current, value: { last: next }, version: current.version + 1, updated_at: now }, current.version)) return next;
  }
  throw conflict(`the ${name} counter is too busy; retry`);
}
