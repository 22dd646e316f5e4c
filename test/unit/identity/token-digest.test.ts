import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { tokenDigest } from '../../../functions/core/identity/auth.js';

/** The digest a token is stored under, computed the long way: an HMAC keyed with the derived key. */
function expected(signingKey: Uint8Array, token: string): string {
  const derived = createHmac('sha256', signingKey).update('svc token digest v1').digest();
  return createHmac('sha256', derived).update(token).digest('hex');
}

describe('tokenDigest', () => {
  it('is the HMAC of the token under the key derived from the signing key, for tokens seen again and after many others', () => {
    const key = randomBytes(32);
    const tokens = Array.from({ length: 1500 }, (_, i) => `svc_${String(i).padStart(8, '0')}_${randomBytes(32).toString('base64url')}`);
    for (const round of [1, 2]) {
      for (const token of tokens) expect(tokenDigest(key, token), `round ${round}`).toBe(expected(key, token));
    }
  });

  it('depends on the signing key, whatever was computed before under another', () => {
    const [a, b] = [randomBytes(32), randomBytes(32)];
    const token = 'bench-admin-token';
    expect(tokenDigest(a, token)).toBe(expected(a, token));
    expect(tokenDigest(b, token)).toBe(expected(b, token));
    expect(tokenDigest(a, token)).not.toBe(tokenDigest(b, token));
  });
});
