import type { Clock, Store } from '../ports.js';
import { conflict } from './errors.js';
import { AGAIN, RACE, retry } from './retry.js';

/** Instance-wide counters (flow version ids) on top of the Store's versioned entities. */

/** Not a workspace id (those never start with `_`), so counters never mix with workspace data. */
const INSTANCE = '_instance';
const ATTEMPTS = 50;

export async function nextSequence(store: Store, clock: Clock, name: string): Promise<number> {
  return retry({ attempts: ATTEMPTS, ...RACE, exhausted: () => conflict(`the ${name} counter is too busy; retry`) }, async () => {
    const now = clock.now().toISOString();
    const current = await store.getEntity('sequence', INSTANCE, name);
    if (!current) {
      const created = await store.createEntity({ kind: 'sequence', workspace_id: INSTANCE, key: name, value: { last: 1 }, version: 1, created_at: now, updated_at: now });
      return created ? 1 : AGAIN;
    }
    const next = (current.value as { last: number }).last + 1;
    return (await store.replaceEntity({ ...current, value: { last: next }, version: current.version + 1, updated_at: now }, current.version)) ? next : AGAIN;
  });
}
