import type { Context } from 'hono';
import { authenticate } from '../core/identity/auth.js';
import { Rights } from '../core/identity/permissions.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';

/**
 * The caller's rights in the request's workspace as they are now, or null when the caller may no
 * longer enter it: a stream that lasts minutes (the run list's feed, a job's updates) checks this
 * as it goes, so a deleted or expired token, an ended session or a removed member stops receiving
 * within the store cache's second, and a changed folder right applies to what it sends next.
 */
export async function freshRights(deps: CoreDeps, c: Context<AppEnv>): Promise<Rights | null> {
  try {
    const rights = await Rights.load(deps, await authenticate(deps, c.get('credentials')), c.get('workspace').id);
    return rights.entersWorkspace() ? rights : null;
  } catch {
    return null;
  }
}
