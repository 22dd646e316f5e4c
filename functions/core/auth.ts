import { ApiError } from './errors.js';
import { sha256Hex, newSecret } from './crypto.js';
import { looksLikeJobToken, verifyJobToken } from './job-tokens.js';
import { parseScopes, type Scope } from './scopes.js';
import type { CoreDeps } from './deps.js';
import type { Clock, Store, TokenRecord } from '../ports.js';

/**
 * Who is calling. Every request is authenticated here (an API token, a session cookie, or a job's
 * token); what the caller may do is decided in permissions.ts.
 */

export interface Principal {
  username: string;
  /** Instance admin: every workspace, users and instance settings. */
  isSuperadmin: boolean;
  /** A token narrowed to one workspace (job tokens always are); null reaches every workspace. */
  workspaceId: string | null;
  /** Null: the user's own permissions; otherwise at most what these allow. */
  scopes: Scope[] | null;
  via: 'token' | 'session' | 'job';
  jobId: string | null;
  /** The hash of the token or session used, so a logout can end exactly that session. */
  tokenHash: string | null;
}

export interface Credentials {
  /** From `Authorization: Bearer` or `?token=`. */
  bearer: string | null;
  /** From the session cookie a password login set. */
  session: string | null;
}

export function hashToken(token: string): string {
  return sha256Hex(`svc-token:${token}`);
}

const UNKNOWN_TOKEN = () => new ApiError(401, 'unauthorized', 'the token is unknown or expired');

export async function authenticate(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, credentials: Credentials): Promise<Principal> {
  const token = credentials.bearer ?? credentials.session;
  if (!token) {
    throw new ApiError(401, 'unauthorized', 'a token is required: send "Authorization: Bearer <token>" or ?token=<token>, or log in');
  }
  if (looksLikeJobToken(token)) return authenticateJob(deps, token);
  const tokenHash = hashToken(token);
  const record = await deps.store.getToken(tokenHash);
  if (!record) throw UNKNOWN_TOKEN();
  // Expired tokens stop working at once; the sweep deletes them and tells their owners (token-expiry.ts).
  if (isExpired(record, deps.clock)) throw UNKNOWN_TOKEN();
  const user = await deps.store.getUser(record.owner);
  if (!user) throw UNKNOWN_TOKEN();
  return {
    username: user.username,
    isSuperadmin: user.is_admin,
    workspaceId: record.workspace_id,
    scopes: record.scopes ? parseScopes(record.scopes) : null,
    via: record.kind === 'session' ? 'session' : 'token',
    jobId: null,
    tokenHash,
  };
}

/** A job token acts for its job's creator, in its workspace, while the job runs (spec 5.4). */
async function authenticateJob(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, token: string): Promise<Principal> {
  const claims = await verifyJobToken(deps.config.signingKey, token, deps.clock.now());
  if (!claims) throw UNKNOWN_TOKEN();
  const [job, user] = await Promise.all([deps.store.getJob(claims.workspaceId, claims.jobId), deps.store.getUser(claims.username)]);
  if (!job || job.status !== 'running' || !user) throw UNKNOWN_TOKEN();
  return jobPrincipal(user.username, user.is_admin, claims.workspaceId, claims.jobId, claims.scopes);
}

/** The identity a job acts with: its creator's, limited to the job's workspace and to the scopes of what started it. */
export function jobPrincipal(username: string, isSuperadmin: boolean, workspaceId: string, jobId: string, scopes: readonly string[] | null | undefined): Principal {
  return { username, isSuperadmin, workspaceId, scopes: scopes ? parseScopes(scopes) : null, via: 'job', jobId, tokenHash: null };
}

export function isExpired(record: Pick<TokenRecord, 'expires_at'>, clock: Clock): boolean {
  return record.expires_at !== null && Date.parse(record.expires_at) <= clock.now().getTime();
}

/** Instance-level actions (users, workspaces): instance admins only, never through a narrowed token. */
export function requireInstanceAdmin(principal: Principal, what: string): void {
  if (!principal.isSuperadmin || principal.via === 'job' || principal.scopes !== null || principal.workspaceId !== null) {
    throw new ApiError(403, 'forbidden', `only an instance admin, with an unrestricted token or session, may ${what}`);
  }
}

/**
 * Managing one's own tokens and password needs the user's full identity: a job token or a scoped
 * token must not mint itself a broader, longer-lived token.
 */
export function requireFullIdentity(principal: Principal, what: string): void {
  if (principal.via === 'job' || principal.scopes !== null || principal.workspaceId !== null) {
    throw new ApiError(403, 'forbidden', `${what} needs a login session or an unrestricted API token, not a job or scoped token`);
  }
}

export const TOKEN_PREFIX_LENGTH = 12;

/** Issues a token, storing only its hash; the value is returned once and never again. */
export async function issueToken(
  store: Store,
  clock: Clock,
  fields: Pick<TokenRecord, 'label' | 'owner' | 'workspace_id' | 'expires_at' | 'scopes' | 'kind'>,
  value: string = `svc_${newSecret()}`,
): Promise<string> {
  await store.putToken({
    ...fields,
    token_hash: hashToken(value),
    prefix: value.slice(0, TOKEN_PREFIX_LENGTH),
    created_at: clock.now().toISOString(),
    expiry_notice_at: null,
  });
  return value;
}
