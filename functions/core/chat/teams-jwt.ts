import type { createLocalJWKSet, JSONWebKeySet, JWTPayload } from 'jose';
import { ApiError } from '../common/errors.js';
import { fetchJson } from './teams-api.js';
import type { TeamsConnection } from './chat-settings.js';
import type { CoreDeps } from '../deps.js';

/**
 * Bot Framework's proof that a call comes from the channel service: `Authorization: Bearer <JWT>`
 * signed with a key listed at the OpenID metadata's `jwks_uri`, issued by
 * `https://api.botframework.com` to the bot's app id, unexpired, and naming the activity's
 * `serviceUrl`. The keys are read through the guarded outbound client and kept for a day, as the
 * Bot Framework asks (it publishes new keys well before signing with them); a token naming a key
 * not in the kept set reads them again, so a rotation is picked up at once.
 */

const ISSUER = 'https://api.botframework.com';
const KEYS_KEPT_MS = 24 * 60 * 60 * 1000;
/** Forged tokens naming made-up keys must not turn every callback into two outbound reads: one a second at most. */
const MIN_REFETCH_INTERVAL_MS = 1_000;
/** jose, loaded with the first Teams call rather than at start. */
const jose = () => import('jose');
const unauthorized = (message: string) => new ApiError(401, 'unauthorized', message);

type KeySet = ReturnType<typeof createLocalJWKSet>;
interface KeptKeys {
  keys: KeySet;
  readAt: number;
}
/** Per OpenID metadata URL (one per Teams connection, usually the Bot Framework's one). */
const kept = new Map<string, KeptKeys>();

export async function assertBotFrameworkToken(deps: Pick<CoreDeps, 'outbound' | 'clock'>, conn: TeamsConnection, authorization: string | undefined, serviceUrl: unknown): Promise<void> {
  const token = authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
  if (!token) throw unauthorized('a Teams call needs Authorization: Bearer <Bot Framework token>');
  await assertMayBeOurs(token, conn);
  const now = deps.clock.now().getTime();
  let entry = kept.get(conn.openidMetadataUrl);
  if (!entry || now - entry.readAt > KEYS_KEPT_MS) entry = await readKeys(deps, conn, now);
  let claims: JWTPayload;
  try {
    claims = await verify(token, entry.keys, conn);
  } catch (e) {
    if (!(e instanceof (await jose()).errors.JWKSNoMatchingKey) || now - entry.readAt < MIN_REFETCH_INTERVAL_MS) throw invalid(e);
    try {
      claims = await verify(token, (await readKeys(deps, conn, now)).keys, conn);
    } catch (again) {
      throw invalid(again);
    }
  }
  if (typeof claims.serviceurl === 'string' && claims.serviceurl.replace(/\/+$/, '') !== String(serviceUrl ?? '').replace(/\/+$/, '')) {
    throw unauthorized('the Bot Framework token names another serviceUrl than the activity');
  }
}

/**
 * Before any outbound read: the token must be a JWT the Bot Framework issued to this bot (read, not
 * yet verified). Anything else (an svc token, junk, a token for another bot) is refused as the
 * signature check would refuse it, without making the caller wait on, or fail with, the keys' server.
 */
async function assertMayBeOurs(token: string, conn: TeamsConnection): Promise<void> {
  const { decodeJwt, decodeProtectedHeader } = await jose();
  let claims: JWTPayload;
  try {
    decodeProtectedHeader(token);
    claims = decodeJwt(token);
  } catch (e) {
    throw invalid(e);
  }
  if (claims.iss !== ISSUER) throw unauthorized('the Bot Framework token is not valid: unexpected "iss" claim value');
  const audiences = [claims.aud].flat();
  if (!audiences.includes(conn.appId)) throw unauthorized('the Bot Framework token is not valid: unexpected "aud" claim value');
}

async function verify(token: string, keys: KeySet, conn: TeamsConnection): Promise<JWTPayload> {
  return (await (await jose()).jwtVerify(token, keys, { issuer: ISSUER, audience: conn.appId, clockTolerance: 300 })).payload;
}

const invalid = (e: unknown) => unauthorized(`the Bot Framework token is not valid: ${(e as Error).message}`);

async function readKeys(deps: Pick<CoreDeps, 'outbound'>, conn: TeamsConnection, now: number): Promise<KeptKeys> {
  try {
    const metadata = await fetchJson(deps, 'OpenID metadata', { method: 'GET', url: conn.openidMetadataUrl }, 1);
    if (typeof metadata.jwks_uri !== 'string') throw new Error('no jwks_uri');
    const keys = await fetchJson(deps, 'signing keys', { method: 'GET', url: metadata.jwks_uri }, 1);
    const entry = { keys: (await jose()).createLocalJWKSet(keys as unknown as JSONWebKeySet), readAt: now };
    kept.set(conn.openidMetadataUrl, entry);
    return entry;
  } catch (e) {
    throw new ApiError(503, 'upstream_unavailable', `the Bot Framework signing keys could not be read: ${(e as Error).message}`);
  }
}
