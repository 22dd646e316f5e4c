import { sha256Hex } from '../common/crypto.js';
import { readEntity, tryCreateEntity, tryReplaceEntity } from '../store/entities.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';
import type { CachedResultValue as CachedResult } from '../documents/entity-values.js';

/**
 * The result cache of `cache_ttl` (docs/flows.md): a successful run of a script version or flow
 * version stores its result under the version and its arguments; an identical run within the TTL
 * is answered with that result and runs nothing. Entries live in the Store as workspace documents
 * (kind `result_cache`), so both shells share one rule; an expired entry is replaced by the next
 * successful run.
 */

/**
 * What a cached run is: the version it ran (a script hash or a flow version), its arguments, and
 * who ran it with which token scopes. A run acts with its starter's rights (their variables,
 * resources, `$var:` arguments), so its result is reused only for the same identity: another
 * member running the same thing never sees a result computed with rights they may not have.
 */
export function resultCacheKey(job: Pick<Job, 'kind' | 'script_hash' | 'flow_version' | 'created_by' | 'created_scopes'>, args: Record<string, unknown> | null): string {
  const version = job.kind === 'flow' ? `flow:${job.flow_version}` : `script:${job.script_hash}`;
  const identity = { user: job.created_by, scopes: job.created_scopes ? [...job.created_scopes].sort() : null };
  return `${version}:${sha256Hex(canonicalJson({ args: args ?? {}, identity }))}`;
}

/**
 * A flow step's cache key (the step's own `cache_ttl`): the flow version and step, the code it
 * runs (a script step's hash), its arguments and who started the flow. Apart from the script's
 * own entries, so a step's TTL never answers a run of the script and the other way round.
 */
export function stepResultCacheKey(flowVersion: number, moduleId: string, job: Pick<Job, 'script_hash' | 'created_by' | 'created_scopes' | 'args'>): string {
  const identity = { user: job.created_by, scopes: job.created_scopes ? [...job.created_scopes].sort() : null };
  return `step:${flowVersion}:${moduleId}:${sha256Hex(canonicalJson({ code: job.script_hash ?? null, args: job.args ?? {}, identity }))}`;
}

/** JSON with object keys sorted at every level, so equal arguments give equal keys whatever their order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}


/** The stored result of an identical run, when one has not expired yet. */
export async function findCachedResult(deps: Pick<CoreDeps, 'store' | 'clock'>, workspaceId: string, key: string): Promise<CachedResult | null> {
  const entry = await readEntity(deps.store, 'result_cache', workspaceId, key);
  if (!entry || Date.parse(entry.value.expires_at) <= deps.clock.now().getTime()) return null;
  return entry.value;
}

/** Stores a successful run's result for `ttlSeconds`; a concurrent writer's entry is as good, so a lost race is left as it is. */
export async function storeCachedResult(deps: Pick<CoreDeps, 'store' | 'clock'>, job: Job, result: unknown, ttlSeconds: number, key = resultCacheKey(job, job.args)): Promise<void> {
  const value: CachedResult = { result, job: job.id, expires_at: new Date(deps.clock.now().getTime() + ttlSeconds * 1000).toISOString() };
  const current = await readEntity(deps.store, 'result_cache', job.workspace_id, key);
  if (current) await tryReplaceEntity(deps.store, deps.clock, current, value);
  else await tryCreateEntity(deps.store, deps.clock, 'result_cache', job.workspace_id, key, value);
}

/**
 * Removes the workspace documents of expired results, a bounded number per call (the shells' prune
 * timers call it): an entry is otherwise only replaced when its identical run comes again.
 */
export async function pruneExpiredResults(deps: Pick<CoreDeps, 'store' | 'clock'>, budget = 1000): Promise<number> {
  const now = deps.clock.now().getTime();
  let removed = 0;
  for (const ws of await deps.store.listWorkspaces()) {
    for (const entry of await deps.store.listEntities('result_cache', ws.id)) {
      if (removed >= budget) return removed;
      const expiresAt = typeof entry.value.expires_at === 'string' ? Date.parse(entry.value.expires_at) : 0;
      if (expiresAt <= now && (await deps.store.deleteEntity('result_cache', ws.id, entry.key))) removed++;
    }
  }
  return removed;
}

/** The log line of a run answered from the cache. */
export function cacheHitLog(cached: CachedResult, ttlSeconds: number): string {
  return `cache hit: the result of job ${cached.job} (cache_ttl ${ttlSeconds}s, valid until ${cached.expires_at}); nothing was run\n`;
}

/**
 * A new run of a version with `cache_ttl` whose identical run is cached: stored as a job finished
 * with that result, marked `cache_hit`, without running anything; waiters (a sync webhook) get
 * the result at once. Null when nothing is cached: the run goes ahead as usual.
 */
export async function answerFromCache(deps: Pick<CoreDeps, 'store' | 'clock' | 'signals'>, job: Job, ttlSeconds: number): Promise<Job | null> {
  const cached = await findCachedResult(deps, job.workspace_id, resultCacheKey(job, job.args));
  if (!cached) return null;
  return storeCacheHit(deps, job, cached, ttlSeconds);
}

/** Stores `job` as finished with the cached result, marked `cache_hit`, and tells its waiters. */
export async function storeCacheHit(deps: Pick<CoreDeps, 'store' | 'clock' | 'signals'>, job: Job, cached: CachedResult, ttlSeconds: number): Promise<Job> {
  // Held, so no worker takes it in the moment between its insert and its completion.
  const hit: Job = { ...job, cache_hit: true, held: true };
  await deps.store.insertJob(hit);
  const now = deps.clock.now().toISOString();
  const logs = cacheHitLog(cached, ttlSeconds);
  await deps.store.completeJob(job.id, { status: 'success', result: cached.result, logs }, now);
  deps.signals.notify(job.id, { status: 'success', result: cached.result });
  return { ...hit, status: 'success', success: true, result: cached.result, logs, completed_at: now };
}
