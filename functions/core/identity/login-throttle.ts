import { ApiError } from '../common/errors.js';
import { newUuid } from '../common/crypto.js';
import { log } from '../common/logger.js';
import { getEntityValue, listEntityValues, tryCreateEntity, updateEntity } from '../store/entities.js';
import type { AuditEntry, LoginCounter as Counter } from '../documents/entity-values.js';
import type { CoreDeps } from '../deps.js';

/**
 * Password guessing is slowed per account and per client address: after too many wrong passwords
 * within a window, logins for that account (or from that address) are refused with 429 and
 * Retry-After until the lock ends, whether or not the next password is right. Counts live in the
 * store, so every API instance (each Lambda) sees the same ones; a lockout is written to the audit
 * log. An address gets more tries than an account: many people can share one (NAT, proxies).
 */
export const LOGIN_LIMITS = {
  account: { failures: 20, windowMs: 15 * 60_000, lockMs: 15 * 60_000 },
  address: { failures: 100, windowMs: 15 * 60_000, lockMs: 15 * 60_000 },
} as const;

type Scope = keyof typeof LOGIN_LIMITS;

const INSTANCE_SCOPE = '*instance';
type Deps = Pick<CoreDeps, 'store' | 'clock'>;

function subjects(account: string, address: string | null): Array<[Scope, string]> {
  const list: Array<[Scope, string]> = [['account', `account:${account.toLowerCase()}`]];
  if (address) list.push(['address', `address:${address}`]);
  return list;
}

/** Refuses (429) while the account or the address is locked. */
export async function assertLoginAllowed(deps: Deps, account: string, address: string | null): Promise<void> {
  const now = deps.clock.now().getTime();
  for (const [scope, key] of subjects(account, address)) {
    const counter = await getEntityValue(deps.store, 'login_throttle', INSTANCE_SCOPE, key);
    const until = counter?.locked_until ? Date.parse(counter.locked_until) : 0;
    if (until > now) {
      const retryAfter = Math.ceil((until - now) / 1000);
      throw new ApiError(429, 'too_many_login_attempts', `too many wrong passwords for this ${scope}; try again in ${retryAfter} seconds`, { retry_after: retryAfter });
    }
  }
}

/** Counts a wrong password against the account and the address, locking them at their limit. */
export async function recordLoginFailure(deps: Deps, account: string, address: string | null): Promise<void> {
  for (const [scope, key] of subjects(account, address)) {
    const limit = LOGIN_LIMITS[scope];
    let lockedNow = false;
    const count = (current: Counter): Counter => {
      const now = deps.clock.now().getTime();
      const fresh = now - Date.parse(current.window_start) > limit.windowMs || (current.locked_until !== null && Date.parse(current.locked_until) <= now);
      const failures = (fresh ? 0 : current.failures) + 1;
      lockedNow = failures >= limit.failures;
      return {
        failures: lockedNow ? 0 : failures,
        window_start: fresh ? new Date(now).toISOString() : current.window_start,
        locked_until: lockedNow ? new Date(now + limit.lockMs).toISOString() : fresh ? null : current.locked_until,
      };
    };
    const now = deps.clock.now().toISOString();
    // null when it exists already: then it is updated below
    await tryCreateEntity(deps.store, deps.clock, 'login_throttle', INSTANCE_SCOPE, key, { failures: 0, window_start: now, locked_until: null });
    await updateEntity(deps.store, deps.clock, 'login_throttle', INSTANCE_SCOPE, key, 'login counter', count);
    if (lockedNow) await audit(deps, 'login_locked', { scope, subject: key.slice(key.indexOf(':') + 1), until: new Date(deps.clock.now().getTime() + limit.lockMs).toISOString() });
  }
}

/** A right password ends the account's count (the address keeps its own). */
export async function recordLoginSuccess(deps: Deps, account: string): Promise<void> {
  await deps.store.deleteEntity('login_throttle', INSTANCE_SCOPE, `account:${account.toLowerCase()}`);
}

/**
 * The instance's audit log: security-relevant events, kept in the store and written as a log line
 * (never with a secret in it).
 */
export async function audit(deps: Deps, event: string, detail: Record<string, unknown>): Promise<void> {
  const at = deps.clock.now().toISOString();
  const key = `${at}/${newUuid()}`;
  await tryCreateEntity(deps.store, deps.clock, 'audit', INSTANCE_SCOPE, key, { ...detail, event, at });
  log.warn('audit', { event, ...detail });
}

export async function listAudit(deps: Pick<CoreDeps, 'store'>): Promise<AuditEntry[]> {
  return (await listEntityValues(deps.store, 'audit', INSTANCE_SCOPE)).map((e) => e.value);
}
