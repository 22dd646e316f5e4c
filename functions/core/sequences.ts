import type { Clock, Store } from '../ports.js';
import { conflict } from './errors.js';
import { readEntity, tryCreateEntity, tryReplaceEntity } from './entities.js';

/** Instance-wide counters (flow version ids) on top of the Store's versioned entities. */

/** Not a workspace id (those never start with `_`), so counters never mix with workspace data. */
const INSTANCE = '_instance';
const ATTEMPTS = 50;

export async function nextSequence(store: Store, clock: Clock, name: string): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await readEntity(store, 'sequence', INSTANCE, name);
    if (!current) {
      if (await tryCreateEntity(store, clock, 'sequence', INSTANCE, name, { last: 1 })) return 1;
      continue;
    }
    const next = current.value.last + 1;
    if (await tryReplaceEntity(store, clock, current, { last: next })) return next;
  }
  throw conflict(`the ${name} counter is too busy; retry`);
}
