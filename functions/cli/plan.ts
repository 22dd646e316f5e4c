import { payloadHash, type Item, type ItemKind, type RemoteMeta } from './items.js';

/**
 * What a pull or push would do, decided per item from three hashes: the local payload (L), the
 * remote one (R) and the one recorded at the last sync (B, from .svc-sync/state.json; absent before
 * the first sync or for new items).
 *
 * - push: local unchanged since the last sync (L = B) -> nothing; already equal (L = R) -> nothing;
 *   remote unchanged (R = B) -> apply the local side (create, update, or delete when the files were
 *   deleted); otherwise both changed -> conflict.
 * - pull: the mirror image (R = B -> nothing; L = B -> apply the remote side; both -> conflict).
 *
 * So a push never deletes a remote item it never saw locally, a pull keeps local edits the remote
 * did not touch, and nothing changed on both sides is overwritten without --force.
 */

export type Direction = 'pull' | 'push';
export type Op = '+' | '-' | '~';

export interface RemoteSide {
  item: Item;
  meta: RemoteMeta;
}

export interface Change {
  op: Op;
  kind: ItemKind;
  id: string;
  key: string;
  local?: Item;
  remote?: RemoteSide;
  /** Changed on both sides; applied only with --force. */
  conflict: boolean;
}

export interface Plan {
  direction: Direction;
  /** Changes to apply (conflicts included only with force). */
  changes: Change[];
  /** Changed on both sides and not forced. */
  conflicts: Change[];
  /** Items already equal on both sides: their hash becomes the new base. */
  inSync: Map<string, string>;
  /** Items the other direction would carry (for the summary). */
  pending: { key: string; kind: ItemKind; id: string }[];
}

/** Local items whose files could not be read: they count as changed, and are never deleted. */
export const INVALID = 'invalid';

export function planSync(
  direction: Direction,
  local: Map<string, Item | typeof INVALID>,
  remote: Map<string, RemoteSide>,
  base: Map<string, string>,
  opts: { force: boolean },
): Plan {
  const plan: Plan = { direction, changes: [], conflicts: [], inSync: new Map(), pending: [] };
  const keys = [...new Set([...local.keys(), ...remote.keys()])].sort();
  for (const key of keys) {
    const l = local.get(key);
    const r = remote.get(key);
    const L = l === undefined ? undefined : l === INVALID ? INVALID : payloadHash(l.payload);
    const R = r === undefined ? undefined : payloadHash(r.item.payload);
    const B = base.get(key);
    const [mine, theirs] = direction === 'push' ? [L, R] : [R, L];
    const [kind, id] = splitKey(key);
    if (mine === B) {
      if (theirs !== B) plan.pending.push({ key, kind, id });
      continue;
    }
    if (L === R) {
      if (R !== undefined) plan.inSync.set(key, R);
      continue;
    }
    const localItem = l === INVALID ? undefined : l;
    if (direction === 'push' && l === INVALID) continue; // reported as a file error, never pushed
    const op: Op = mine === undefined ? '-' : theirs === undefined ? '+' : '~';
    const change: Change = { op, kind, id, key, local: localItem, remote: r, conflict: theirs !== B };
    if (change.conflict && !opts.force) plan.conflicts.push(change);
    else plan.changes.push(change);
  }
  return plan;
}

export function splitKey(key: string): [ItemKind, string] {
  const i = key.indexOf(':');
  return [key.slice(0, i) as ItemKind, key.slice(i + 1)];
}
