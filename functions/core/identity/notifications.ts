import { newUuid } from '../common/crypto.js';
import { listEntityValues, tryCreateEntity } from '../store/entities.js';
import { requireFullIdentity, type Principal } from './auth.js';
import type { CoreDeps } from '../deps.js';
import type { Notice, OutboxEntry } from './identity-documents.js';

/**
 * Notices to users (spec 3, 5.8): by email when the instance can send it (SMTP locally, SES on
 * AWS), else kept in an outbox the API lists to their addressee. A notice never holds a secret.
 */

/** Notices belong to no workspace: they are kept under this scope, which no workspace id can take. */
const INSTANCE_SCOPE = '*instance';

export async function notifyUser(deps: Pick<CoreDeps, 'store' | 'clock' | 'email'>, username: string, notice: Notice): Promise<'sent' | 'outbox' | 'no_user'> {
  const user = await deps.store.getUser(username);
  if (!user) return 'no_user';
  if (deps.email && user.email) {
    await deps.email.send({ to: user.email, ...notice });
    return 'sent';
  }
  const now = deps.clock.now().toISOString();
  const id = newUuid();
  // Keyed by user and time, so one user's notices list together, oldest first.
  await tryCreateEntity(deps.store, deps.clock, 'notification', INSTANCE_SCOPE, `${username}/${now}/${id}`, { id, ...notice, created_at: now });
  return 'outbox';
}

/** The caller's notices that could not be mailed, oldest first. */
export async function listOutbox(deps: Pick<CoreDeps, 'store'>, principal: Principal): Promise<OutboxEntry[]> {
  requireFullIdentity(principal, 'reading notices');
  const mine = (await listEntityValues(deps.store, 'notification', INSTANCE_SCOPE)).filter((e) => e.key.startsWith(`${principal.username}/`));
  return mine.map((e) => e.value);
}
