import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { ApiError } from '../errors.js';
import { fetchJson } from './teams-api.js';
import type { TeamsConnection } from './teams-connection.js';
import type { CoreDeps } from '../deps.js';

/**
 * Bot Framework's proof that a call comes from the channel service: `Authorization: Bearer <JWT>`
 * signed with a key listed at the OpenID metadata's `jwks_uri`, issued by
 * `https://api.botframework.com` to the bot's app id, unexpired, and naming the activity's
 * `serviceUrl`. The keys are fetched through the guarded outbound client on each call.
 */

const ISSUER = 'https://api.botframework.com';
const unauthorized = (message: string) => new ApiError(401, 'unauthorized', message);

export async function assertBotFrameworkToken(deps: Pick<CoreDeps, 'outbound'>, conn: TeamsConnection, authorization: string | undefined, serviceUrl: unknown): Promise<void> {
  const token = authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
  if (!token) throw unauthorized('a Teams call needs Authorization: Bearer <Bot Framework token>');
  const jwks = await signingKeys(deps, conn);
  let claims: Record<string, unknown>;
  try {
    ({ payload: claims } = await jwtVerify(token, jwks, { issuer: ISSUER, audience: conn.appId, clockTolerance: 300 }));
  } catch (e) {
    throw unauthorized(`the Bot Framework token is not valid: ${(e as Error).message}`);
  }
  if (typeof claims.serviceurl === 'string' && claims.serviceurl.replace(/\/+$/, '') !== String(serviceUrl ?? '').replace(/\/+$/, '')) {
    throw unauthorized('the Bot Framework token names another serviceUrl than the activity');
  }
}

async function signingKeys(deps: Pick<CoreDeps, 'outbound'>, conn: TeamsConnection) {
  try {
    const metadata = await fetchJson(deps, 'OpenID metadata', { method: 'GET', url: conn.openidMetadataUrl }, 1);
    if (typeof metadata.jwks_uri !== 'string') throw new Error('no jwks_uri');
    const keys = await fetchJson(deps, 'signing keys', { method: 'GET', url: metadata.jwks_uri }, 1);
    return createLocalJWKSet(keys as unknown as JSONWebKeySet);
  } catch (e) {
    throw new ApiError(503, 'internal', `the Bot Framework signing keys could not be read: ${(e as Error).message}`);
  }
}
