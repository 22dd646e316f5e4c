import { typed, type StoredEntity } from '../store/entities.js';
import type { Store } from '../../ports.js';

/**
 * The flow runs this process stored last, by workspace and flow job. A flow's next turn (its next
 * step) reads its run back first: while the stored version is still the one written here, the
 * document is the one written — checked against its schema when it was written — so it is not
 * parsed again (its modules and results, ~8 KB for a 40-step flow, on every step). Any other
 * version (another process or call wrote it since) is parsed as usual. Callers copy before
 * changing the run, as they must with any read.
 */
const MAX_RUNS = 1000;
const runs = new Map<string, StoredEntity<'flow_run'>>();

const keyOf = (workspaceId: string, flowJobId: string) => `${workspaceId}\u0000${flowJobId}`;

export async function readFlowRun(store: Store, workspaceId: string, flowJobId: string): Promise<StoredEntity<'flow_run'> | null> {
  const stored = await store.getEntity('flow_run', workspaceId, flowJobId);
  if (!stored) return null;
  const mine = runs.get(keyOf(workspaceId, flowJobId));
  if (mine && mine.version === stored.version && mine.created_at === stored.created_at && mine.updated_at === stored.updated_at) return mine;
  return typed('flow_run', stored);
}

/** Called with what a write returned; a finished run will not be read for its next step. */
export function rememberFlowRun(written: StoredEntity<'flow_run'>): void {
  const key = keyOf(written.workspace_id, written.key);
  runs.delete(key);
  if (written.value.status === 'finished') return;
  runs.set(key, written);
  if (runs.size > MAX_RUNS) runs.delete(runs.keys().next().value!);
}
