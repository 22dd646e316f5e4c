import type { Job } from '../../ports.js';
import type { CachedResultValue } from '../documents/entity-values.js';
import type { AwaitedJob } from './awaited-jobs.js';
import { nothingCounted, type CountedJobs } from './step-admission.js';

/** What a flow's turn does once the new state is stored (advance.ts carryOut), gathered as it moves the run forward. */
export interface Effects {
  /** Jobs made by this call (new ids): nobody can have inserted them yet. */
  push: Job[];
  /** Jobs the stored state names but the store lacks (a crash between the two): inserted unless there by now. */
  restart: Job[];
  cancel: AwaitedJob[];
  /** Runs of branches or iterations that will never start (their step stopped or was canceled): removed with what they hold. */
  discard: string[];
  /** A suspended step's timeout: the flow must be woken then. */
  wakeAt: Date | null;
  /** ConsentGates just reached, whose approvers are to be told. */
  notify: string[];
  /** Steps answered from their `cache_ttl` cache: stored as finished jobs marked `cache_hit`. */
  cacheHits: { job: Job; cached: CachedResultValue; ttl: number }[];
  /** Steps with `cache_ttl` that succeeded: their result answers identical steps within the TTL. */
  cacheStores: { job: Job; result: unknown; ttl: number; key: string }[];
  /** The new jobs this turn counted on its run's top (step-admission.ts): given back when it stores nothing. */
  counted: CountedJobs;
}

export function noEffects(): Effects {
  return { push: [], restart: [], cancel: [], discard: [], wakeAt: null, notify: [], cacheHits: [], cacheStores: [], counted: nothingCounted() };
}
