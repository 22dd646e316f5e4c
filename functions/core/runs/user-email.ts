import type { Clock, Store } from '../../ports.js';

/**
 * The email of the user a job runs as, for Windmill's `WM_EMAIL` (core/runs/windmill-env.ts).
 * Read once a minute at most per user and store, so a job costs no read of its user: an email
 * changed meanwhile reaches jobs within a minute. Empty for a user the store does not have.
 */
const TTL_MS = 60_000;
const MAX_USERS = 10_000;
const caches = new WeakMap<Store, Map<string, { email: string; at: number }>>();

export async function userEmail(deps: { store: Store; clock: Clock }, username: string): Promise<string> {
  let cache = caches.get(deps.store);
  if (!cache) caches.set(deps.store, (cache = new Map()));
  const now = deps.clock.now().getTime();
  const hit = cache.get(username);
  if (hit && now - hit.at < TTL_MS) return hit.email;
  const email = (await deps.store.getUser(username))?.email ?? '';
  cache.delete(username);
  cache.set(username, { email, at: now });
  if (cache.size > MAX_USERS) cache.delete(cache.keys().next().value as string);
  return email;
}
