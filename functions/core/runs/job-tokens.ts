import { createHmac } from 'node:crypto';

/**
 * A job's OV_TOKEN: an HS256 JWT signed with the instance key, naming the job, its workspace and
 * the user it acts for. Nothing is stored per job; the token is honoured only while its job runs.
 */

export interface JobTokenClaims {
  username: string;
  workspaceId: string;
  jobId: string;
  /** The scopes of what started the job; null or absent: the user's own permissions. */
  scopes?: string[] | null;
}

const ISSUER = 'svc';
const AUDIENCE = 'svc-job';
const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

/**
 * Signing happens on every job start, so it is one synchronous HMAC: jose signs through WebCrypto,
 * whose thread-pool round trip measured ~0.5 ms of each sync webhook's latency. Verification,
 * where the claim checks matter, is jose's.
 */
export function signJobToken(key: Uint8Array, claims: JobTokenClaims, expiresAt: Date): string {
  const payload = base64url(
    JSON.stringify({
      iss: ISSUER,
      aud: AUDIENCE,
      sub: claims.username,
      ws: claims.workspaceId,
      job: claims.jobId,
      ...(claims.scopes ? { scp: claims.scopes } : {}),
      exp: Math.floor(expiresAt.getTime() / 1000),
    }),
  );
  const signature = createHmac('sha256', key).update(`${HEADER}.${payload}`).digest('base64url');
  return `${HEADER}.${payload}.${signature}`;
}

/** The claims of a valid, unexpired job token, or null. */
export async function verifyJobToken(key: Uint8Array, token: string, now: Date): Promise<JobTokenClaims | null> {
  try {
    // jose is loaded with the first token to check, not at start.
    const { jwtVerify } = await import('jose');
    const { payload } = await jwtVerify(token, key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'], currentDate: now });
    if (typeof payload.sub !== 'string' || typeof payload.ws !== 'string' || typeof payload.job !== 'string') return null;
    const claims: JobTokenClaims = { username: payload.sub, workspaceId: payload.ws, jobId: payload.job };
    if (payload.scp === undefined) return claims;
    if (!Array.isArray(payload.scp) || !payload.scp.every((s) => typeof s === 'string')) return null;
    return { ...claims, scopes: payload.scp as string[] };
  } catch {
    return null;
  }
}

/** JWTs are three base64url parts; API tokens never contain a dot. */
export function looksLikeJobToken(token: string): boolean {
  return token.split('.').length === 3;
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}
