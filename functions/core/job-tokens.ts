import { SignJWT, jwtVerify } from 'jose';

/**
 * A job's OV_TOKEN: a JWT signed with the instance key, naming the job, its workspace and the
 * user it acts for. Nothing is stored per job; the token is honoured only while its job runs.
 */

export interface JobTokenClaims {
  username: string;
  workspaceId: string;
  jobId: string;
}

const ISSUER = 'svc';
const AUDIENCE = 'svc-job';

// Importing the raw key costs more than signing with it; do it once per key.
const importedKeys = new WeakMap<Uint8Array, Promise<CryptoKey>>();
function cryptoKey(raw: Uint8Array): Promise<CryptoKey> {
  let key = importedKeys.get(raw);
  if (!key) {
    key = globalThis.crypto.subtle.importKey('raw', new Uint8Array(raw), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    importedKeys.set(raw, key);
  }
  return key;
}

export async function signJobToken(key: Uint8Array, claims: JobTokenClaims, expiresAt: Date): Promise<string> {
  return new SignJWT({ ws: claims.workspaceId, job: claims.jobId })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(claims.username)
    .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
    .sign(await cryptoKey(key));
}

/** The claims of a valid, unexpired job token, or null. */
export async function verifyJobToken(key: Uint8Array, token: string, now: Date): Promise<JobTokenClaims | null> {
  try {
    const { payload } = await jwtVerify(token, await cryptoKey(key), { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'], currentDate: now });
    if (typeof payload.sub !== 'string' || typeof payload.ws !== 'string' || typeof payload.job !== 'string') return null;
    return { username: payload.sub, workspaceId: payload.ws, jobId: payload.job };
  } catch {
    return null;
  }
}

/** JWTs are three base64url parts; API tokens never contain a dot. */
export function looksLikeJobToken(token: string): boolean {
  return token.split('.').length === 3;
}
