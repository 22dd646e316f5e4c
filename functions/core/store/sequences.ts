import type { Clock, Store } from '../../ports.js';
import { conflict } from '../common/errors.js';
import { readEntity, tryCreateEntity, tryReplaceEntity } from './entities.js';
import { AGAIN, RACE, retry } from '../common/retry.js';

/** Instance-wide counters (flow version ids) on top of the Store's versioned entities. */

/** Not a workspace id (those never start with `_`), so counters never mix with workspace data. */
const INSTANCE = '_instance';
const ATTEMPTS = 50;

export async function nextSequence(store: Store, clock: Clock, name: string): Promise<number> {
  return retry({ attempts: ATTEMPTS, ...RACE, exhausted: () => conflict(`the ${name} counter is too busy; retry`) }, async () => {
    const current = await readEntity(store, 'sequence', INSTANCE, name);
    if (!current) return (await tryCreateEntity(store, clock, 'sequence', INSTANCE, name, { last: 1 })) ? 1 : AGAIN;
    const next = current.value.last + 1;
    return (await tryReplaceEntity(store, clock, current, { last: next })) ? next : AGAIN;
  });
}
