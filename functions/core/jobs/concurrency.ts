import { readEntity, tryCreateEntity, tryReplaceEntity } from '../store/entities.js';
import { AGAIN, RACE, retry } from '../common/retry.js';
import { conflict } from '../common/errors.js';
import { log, errorText } from '../common/logger.js';
import { FINISHED_STATUSES, type Job } from '../../ports.js';
import type { ConcurrencySlots } from '../documents/entity-values.js';
import type { CoreDeps } from '../deps.js';

/**
 * `concurrent_limit` (docs/flows.md): at most `limit` runs per concurrency key at once; a run that
 * ended still counts until `window_s` seconds after it started. Runs beyond that wait, stored
 * `queued` and `held` (no worker takes a held job), in the order they arrived, and are let go one
 * by one as slots free: when a counted run ends, when a new run arrives, and on the shells'
 * periodic sweep (which also lets go of the runs an ended time window frees). Nothing is dropped.
 * The slots of a key are one workspace document (kind `concurrency_slots`) changed by optimistic
 * writes, so both shells keep the same rule.
 */

type Slots = ConcurrencySlots;
type Holder = Slots['holders'][number];
type Deps = Pick<CoreDeps, 'store' | 'clock' | 'queue'>;

export interface SlotPolicy {
  limit: number;
  window_s: number;
}

const ATTEMPTS = 50;

/** The holders that still count at `now`. */
function counted(slots: Slots, now: number): Holder[] {
  return slots.holders.filter((h) => !h.ended_at || Date.parse(h.started_at) + slots.window_s * 1000 > now);
}

/** Takes waiting runs off the front while there is room; returns them. */
function admitWaiting(slots: Slots, now: number): string[] {
  slots.holders = counted(slots, now);
  const admitted: string[] = [];
  while (slots.waiting.length > 0 && slots.holders.length < slots.limit) {
    const job = slots.waiting.shift()!;
    slots.holders.push({ job, started_at: new Date(now).toISOString() });
    admitted.push(job);
  }
  return admitted;
}

/**
 * Changes the key's slots with `change` (on a copy), retrying lost races; the jobs it admits are
 * then let go to the queue. A missing document starts empty.
 */
async function changeSlots(deps: Deps, workspaceId: string, key: string, policy: SlotPolicy | null, change: (slots: Slots, now: number) => Promise<void> | void): Promise<string[]> {
  const admitted = await retry({ attempts: ATTEMPTS, ...RACE, exhausted: () => conflict(`the concurrency slots of ${key} are busy; retry`) }, async () => {
    const current = await readEntity(deps.store, 'concurrency_slots', workspaceId, key);
    if (!current && !policy) return [];
    const slots: Slots = structuredClone(current?.value ?? { limit: policy!.limit, window_s: policy!.window_s, holders: [], waiting: [] });
    // The latest version's settings apply from now on.
    if (policy) Object.assign(slots, policy);
    const now = deps.clock.now().getTime();
    await change(slots, now);
    const admitted = admitWaiting(slots, now);
    const written = current ? await tryReplaceEntity(deps.store, deps.clock, current, slots) : await tryCreateEntity(deps.store, deps.clock, 'concurrency_slots', workspaceId, key, slots);
    return written ? admitted : AGAIN;
  });
  for (const id of admitted) await letGo(deps, workspaceId, id);
  return admitted;
}

/** A held job whose turn came goes to the workers. */
async function letGo(deps: Deps, workspaceId: string, jobId: string): Promise<void> {
  if (!(await deps.store.releaseHeldJob(jobId))) return;
  const job = await deps.store.getJob(workspaceId, jobId);
  if (job) await deps.queue.enqueue(job);
}

/**
 * A new run under a concurrency key, stored `held`: it takes a slot and goes to the workers when
 * one is free and nobody waits before it; otherwise it waits its turn.
 */
export async function takeSlotOrWait(deps: Deps, job: Job, policy: SlotPolicy): Promise<void> {
  const key = job.concurrency_key!;
  await changeSlots(deps, job.workspace_id, key, policy, async (slots, now) => {
    // A full key is checked for runs that ended without saying so (a crash): they free their slot.
    if (counted(slots, now).length >= slots.limit) await forgetEndedHolders(deps, job.workspace_id, slots);
    slots.waiting.push(job.id);
  });
}

/** A run under a concurrency key ended (or was canceled while waiting): its slot counts on only for its time window. */
export async function leaveSlot(deps: Deps, job: Pick<Job, 'id' | 'workspace_id' | 'concurrency_key'>): Promise<void> {
  if (!job.concurrency_key) return;
  try {
    await changeSlots(deps, job.workspace_id, job.concurrency_key, null, (slots, now) => {
      slots.waiting = slots.waiting.filter((id) => id !== job.id);
      const holder = slots.holders.find((h) => h.job === job.id && !h.ended_at);
      if (holder) holder.ended_at = new Date(now).toISOString();
    });
  } catch (e) {
    // The job's outcome is stored; the periodic sweep frees the slot if this failed.
    log.error('concurrency slot not released', { job_id: job.id, error: errorText(e) });
  }
}

/** Holders whose job has finished or is gone end now (the sweep and a full key's check). */
async function forgetEndedHolders(deps: Deps, workspaceId: string, slots: Slots): Promise<void> {
  for (const h of slots.holders) {
    if (h.ended_at) continue;
    const job = await deps.store.getJob(workspaceId, h.job);
    if (!job || FINISHED_STATUSES.includes(job.status)) h.ended_at = job?.completed_at ?? deps.clock.now().toISOString();
  }
  // A waiting job canceled (or gone) meanwhile gives up its place.
  const still: string[] = [];
  for (const id of slots.waiting) {
    const job = await deps.store.getJob(workspaceId, id);
    if (job && job.status === 'queued') still.push(id);
  }
  slots.waiting = still;
}

/**
 * The periodic sweep of both shells: lets waiting runs go whose slot a time window or an unseen end
 * freed. Returns how many runs it let go.
 */
export async function sweepConcurrencySlots(deps: Deps): Promise<number> {
  let released = 0;
  for (const ws of await deps.store.listWorkspaces()) {
    for (const entity of await deps.store.listEntities('concurrency_slots', ws.id)) {
      const admitted = await changeSlots(deps, ws.id, entity.key, null, async (slots, now) => {
        if (slots.waiting.length > 0 && counted(slots, now).length >= slots.limit) await forgetEndedHolders(deps, ws.id, slots);
      });
      released += admitted.length;
    }
  }
  return released;
}
