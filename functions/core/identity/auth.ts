import { ApiError } from '../common/errors.js';
import { hmacSha256Hex, newSecret, newShortId, sha256Hex } from '../common/crypto.js';
import { looksLikeJobToken, verifyJobToken } from '../runs/job-tokens.js';
import { parseScopes, type Scope } from './scopes.js';
import type { CoreDeps } from '../deps.js';
import type { Clock, Store, TokenRecord } from '../../ports.js';

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
  /** `chat`: a chat user (a Slack click) mapped to their svc user by email (core/chat). */
  via: 'token' | 'session' | 'job' | 'chat';
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

/**
 * What a token is stored under: an HMAC keyed with a key derived from the instance's signing key
 * (a key file locally, Secrets Manager on AWS), so a copy of the database alone does not let
 * anyone test guesses against it. The derivation keeps the two uses apart.
 */
export function tokenDigest(signingKey: Uint8Array, token: string): string {
  const key = digestKey(signingKey);
  const memo = recentDigests.get(key);
  const known = memo?.get(token);
  if (known !== undefined) return known;
  const digest = hmacSha256Hex(key, token);
  remember(key, token, digest);
  return digest;
}

/**
 * The digests of the tokens seen last, per key: an HMAC (a keyed hash object made and used once)
 * is a noticeable part of a sync webhook's CPU, and callers send the same few tokens again and
 * again. A digest says nothing of whether the token is still valid: that is looked up every time.
 */
const RECENT_DIGESTS = 512;
const recentDigests = new WeakMap<Buffer, Map<string, string>>();
function remember(key: Buffer, token: string, digest: string): void {
  let memo = recentDigests.get(key);
  if (!memo) recentDigests.set(key, (memo = new Map()));
  // Oldest first out: a Map iterates in insertion order.
  if (memo.size >= RECENT_DIGESTS) memo.delete(memo.keys().next().value!);
  memo.set(token, digest);
}

// The derived key, once per signing key rather than once per request.
const digestKeys = new WeakMap<Uint8Array, Buffer>();
function digestKey(signingKey: Uint8Array): Buffer {
  let key = digestKeys.get(signingKey);
  if (!key) digestKeys.set(signingKey, (key = Buffer.from(hmacSha256Hex(signingKey, 'svc token digest v1'), 'hex')));
  return key;
}

/** How tokens were stored before (unsalted SHA-256): still found, and rewritten on their next use. */
export function legacyTokenHash(token: string): string {
  return sha256Hex(`svc-token:${token}`);
}

/**
 * New tokens are `svc_<id>_<secret>`: the 8-character id is what listings show and what is kept in
 * clear; no part of the secret is. Tokens of another shape (older ones, SVC_ADMIN_TOKEN) keep only
 * their first 8 characters in clear.
 */
const TOKEN_SHAPE = /^svc_([a-z0-9]{8})_[A-Za-z0-9_-]{43}$/;

export function tokenPrefix(token: string): string {
  return TOKEN_SHAPE.test(token) ? token.slice(0, 12) : token.slice(0, 8);
}

const UNKNOWN_TOKEN = () => new ApiError(401, 'unauthorized', 'the token is unknown or expired');

export async function authenticate(deps: Pick<CoreDeps, 'store' | 'clock' | 'config'>, credentials: Credentials): Promise<Principal> {
  const token = credentials.bearer ?? credentials.session;
  if (!token) {
    throw new ApiError(401, 'unauthorized', 'a token is required: send "Authorization: Bearer <token>" or ?token=<token>, or log in');
  }
  if (looksLikeJobToken(token)) return authenticateJob(deps, token);
  const tokenHash = tokenDigest(deps.config.signingKey, token);
  const record = (await deps.store.getToken(tokenHash)) ?? (await upgradeLegacyToken(deps.store, token, tokenHash));
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

/**
 * A token stored the old way is moved under its keyed digest, with a short prefix, the first time
 * it is used: only then is its value at hand to compute the digest. Idempotent when two requests race.
 */
async function upgradeLegacyToken(store: Store, token: string, digest: string): Promise<TokenRecord | null> {
  const legacyHash = legacyTokenHash(token);
  const legacy = await store.getToken(legacyHash);
  if (!legacy) return null;
  const upgraded: TokenRecord = { ...legacy, token_hash: digest, prefix: tokenPrefix(token) };
  await store.putToken(upgraded);
  await store.deleteToken(legacyHash);
  return upgraded;
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

/** The label of a session opened with an API token (`auth/login {token}`): deleting the token ends it too (tokens.ts). */
export function tokenSessionLabel(prefix: string): string {
  return `session from token ${prefix}`;
}

/** Issues a token, storing only its keyed digest; the value is returned once and never again. */
export async function issueToken(
  deps: { store: Store; clock: Clock; signingKey: Uint8Array },
  fields: Pick<TokenRecord, 'label' | 'owner' | 'workspace_id' | 'expires_at' | 'scopes' | 'kind'>,
  value: string = `svc_${newShortId(8)}_${newSecret()}`,
): Promise<string> {
  await deps.store.putToken({
    ...fields,
    token_hash: tokenDigest(deps.signingKey, value),
    prefix: tokenPrefix(value),
    created_at: deps.clock.now().toISOString(),
    expiry_notice_at: null,
  });
  // A given value (SVC_ADMIN_TOKEN) may have been registered the old way by an earlier start.
  await deps.store.deleteToken(legacyTokenHash(value));
  return value;
}
