/**
 * The local pool's rule for sharing workers between workspaces (docs/scripts.md, How jobs run): a
 * free worker goes to the workspace with the fewest jobs running, then to the one given a worker
 * longest ago. The pool applies it to the callers waiting in memory, and the queue table's claim
 * (sqlite-fair-queue.ts) to the jobs stored queued; each breaks ties by age itself.
 */

/** What the pool knows of each workspace: its jobs running, and when it was last given a worker (a rising count). */
export interface QueueTurns {
  running: ReadonlyMap<string, number>;
  lastServed: ReadonlyMap<string, number>;
}

/** Below 0 when workspace `a` has its turn before `b`, above 0 after, 0 when neither goes first. */
export function turnOrder(a: string, b: string, turns: QueueTurns): number {
  const load = (turns.running.get(a) ?? 0) - (turns.running.get(b) ?? 0);
  if (load !== 0) return load;
  return (turns.lastServed.get(a) ?? 0) - (turns.lastServed.get(b) ?? 0);
}
