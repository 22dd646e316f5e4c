import { z } from 'zod';
import { badRequest, notFound } from '../common/errors.js';
import { issueToken, requireFullIdentity, tokenSessionLabel, type Principal } from './auth.js';
import { EXPIRY_NOTICE_DAYS } from './token-expiry.js';
import { parseScopes } from './scopes.js';
import { parseBody } from '../common/validation.js';
import type { CoreDeps } from '../deps.js';
import type { TokenRecord } from '../../ports.js';

/** API tokens a user creates for themselves (spec 2.8, 5.2-5.3, 5.8). */

export const createTokenBody = z.strictObject({
  // Shown on one line of the token listing: a NUL or line break would be stored as sent. The
  // control characters spelled out, not \p{Cc}: the pattern is also the OpenAPI document's, read
  // by clients whose regular expressions know no Unicode classes.
  label: z.string().min(1).max(200).regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, 'no control characters (line breaks, NUL)'),
  expiration: z.iso.datetime({ offset: true }).nullish(),
  scopes: z.array(z.string().max(300)).min(1).max(100).nullish(),
  // No workspace id is longer (paths.ts, assertWorkspaceId); a longer one cannot be looked up in every store.
  // "" is refused, not read as "no workspace": that would make a token for every workspace.
  workspace_id: z.string().min(1).max(50).nullish(),
});

/** Spec 5.8: tokens expiring within this many days are flagged in the listing. */
const EXPIRING_SOON_DAYS = 30;
const DAY_MS = 24 * 3600 * 1000;

export async function createToken(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, principal: Principal, body: unknown): Promise<string> {
  requireFullIdentity(principal, 'creating a token');
  const input = parseBody(createTokenBody, body);
  if (input.scopes) parseScopes(input.scopes);
  const expiresAt = input.expiration ? new Date(input.expiration) : null;
  if (expiresAt && expiresAt.getTime() <= deps.clock.now().getTime()) {
    throw badRequest('invalid_request', 'expiration: must be in the future', { field: 'expiration' });
  }
  if (input.workspace_id && !(await deps.store.getWorkspace(input.workspace_id))) {
    throw badRequest('invalid_request', `workspace_id: no workspace ${input.workspace_id}`, { field: 'workspace_id' });
  }
  return issueToken({ ...deps, signingKey: deps.config.signingKey }, {
    label: input.label,
    owner: principal.username,
    kind: 'api',
    workspace_id: input.workspace_id ?? null,
    scopes: input.scopes ?? null,
    expires_at: expiresAt?.toISOString() ?? null,
  });
}

export interface TokenView {
  token_prefix: string;
  label: string;
  scopes: string[] | null;
  workspace_id: string | null;
  expiration: string | null;
  created_at: string;
  expired: boolean;
  /** Spec 5.8: the listing's badge for tokens expiring within 30 days. */
  expires_soon: boolean;
  /** The colour of that badge: expired, within the 7 days of the expiry notice, or within 30 days. */
  expiry_badge: 'expired' | 'within_7_days' | 'within_30_days' | null;
}

export async function listTokens(deps: Pick<CoreDeps, 'store' | 'clock'>, principal: Principal): Promise<TokenView[]> {
  requireFullIdentity(principal, 'listing tokens');
  return (await deps.store.listTokens(principal.username))
    .filter((t) => t.kind === 'api')
    .map((t) => {
      const badge = expiryBadge(t, deps.clock.now());
      return {
        token_prefix: t.prefix,
        label: t.label,
        scopes: t.scopes,
        workspace_id: t.workspace_id,
        expiration: t.expires_at,
        created_at: t.created_at,
        expired: badge === 'expired',
        expires_soon: badge === 'within_7_days' || badge === 'within_30_days',
        expiry_badge: badge,
      };
    });
}

function expiryBadge(t: TokenRecord, now: Date): TokenView['expiry_badge'] {
  if (t.expires_at === null) return null;
  const left = Date.parse(t.expires_at) - now.getTime();
  if (left <= 0) return 'expired';
  if (left <= EXPIRY_NOTICE_DAYS * DAY_MS) return 'within_7_days';
  if (left <= EXPIRING_SOON_DAYS * DAY_MS) return 'within_30_days';
  return null;
}

/** Deletes the caller's token with this prefix; it stops working at once. */
export async function deleteToken(deps: Pick<CoreDeps, 'store'>, principal: Principal, prefix: string): Promise<void> {
  requireFullIdentity(principal, 'deleting a token');
  const matches: TokenRecord[] = (await deps.store.listTokens(principal.username)).filter((t) => t.kind === 'api' && t.prefix === prefix);
  if (matches.length === 0) throw notFound(`token ${prefix}`);
  for (const t of matches) await deps.store.deleteToken(t.token_hash);
  // The sessions opened with it (`auth/login {token}`) end with it.
  for (const t of await deps.store.listTokens(principal.username)) {
    if (t.kind === 'session' && t.label === tokenSessionLabel(prefix)) await deps.store.deleteToken(t.token_hash);
  }
}
