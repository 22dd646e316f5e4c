import type { ScriptVersion, Store } from '../../ports.js';

/**
 * Script and flow versions are immutable once stored (a hash or version id names one content for
 * good), so the worker need not read one back for every run. Kept per store, bounded, least
 * recently used first out. Deleting a script path forgets its versions in this process; another
 * process (a Lambda) may still run a version deleted meanwhile for a job accepted before — the
 * same as a job that had already started. What starts a run reads the store, so a deleted
 * version's webhook stops everywhere at once.
 */

const MAX_ENTRIES = 512;

class Lru<V> {
  private readonly map = new Map<string, V>();

  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > MAX_ENTRIES) this.map.delete(this.map.keys().next().value!);
  }

  deleteWhere(test: (value: V) => boolean): void {
    for (const [key, value] of this.map) if (test(value)) this.map.delete(key);
  }
}

const scripts = new WeakMap<Store, Lru<ScriptVersion>>();
const derived = new WeakMap<Store, Lru<unknown>>();

function scriptsOf(store: Store): Lru<ScriptVersion> {
  let cache = scripts.get(store);
  if (!cache) scripts.set(store, (cache = new Lru()));
  return cache;
}

/** A script version by hash, read once per process. */
export async function scriptByHash(store: Store, workspaceId: string, hash: string): Promise<ScriptVersion | null> {
  const cache = scriptsOf(store);
  const key = `${workspaceId}\n${hash}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const script = await store.getScriptByHash(workspaceId, hash);
  if (script) rememberScript(store, script);
  return script;
}

/** A version just read or written elsewhere: the run it starts need not read it again. Frozen: it is shared. */
export function rememberScript(store: Store, script: ScriptVersion): ScriptVersion {
  scriptsOf(store).set(`${script.workspace_id}\n${script.hash}`, Object.freeze(script));
  return script;
}

/** The path's versions are gone: none may be served from here. */
export function forgetScriptPath(store: Store, workspaceId: string, path: string): void {
  scripts.get(store)?.deleteWhere((s) => s.workspace_id === workspaceId && s.path === path);
}

/**
 * Something computed from immutable data only (a flow version, a flow step's code and inferred
 * schema, a job's lineage), built once per process. `key` must name everything the value depends on.
 */
export async function derivedOnce<V>(store: Store, key: string, build: () => Promise<V | null>): Promise<V | null> {
  let cache = derived.get(store);
  if (!cache) derived.set(store, (cache = new Lru()));
  const hit = cache.get(key) as V | undefined;
  if (hit !== undefined) return hit;
  const value = await build();
  // A miss (a version not found) is not remembered: it may be written later.
  if (value !== null) cache.set(key, Object.freeze(value));
  return value;
}
