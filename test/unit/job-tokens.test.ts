import { describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { signJobToken, verifyJobToken, looksLikeJobToken } from '../../functions/core/runs/job-tokens.js';

const key = new Uint8Array(32).fill(7);
const claims = { username: 'ada', workspaceId: 'main', jobId: 'j1' };
const now = new Date('2026-01-01T00:00:00Z');

describe('job tokens', () => {
  it('round-trips the claims through a standard HS256 JWT', async () => {
    const token = signJobToken(key, claims, new Date(now.getTime() + 60_000));
    expect(looksLikeJobToken(token)).toBe(true);
    expect(await verifyJobToken(key, token, now)).toEqual(claims);
  });

  it('refuses expired, tampered, foreign-key and wrong-audience tokens', async () => {
    const token = signJobToken(key, claims, new Date(now.getTime() + 60_000));
    expect(await verifyJobToken(key, token, new Date(now.getTime() + 120_000))).toBeNull();
    const [h, p, s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), ws: 'other' })).toString('base64url');
    expect(await verifyJobToken(key, `${h}.${forged}.${s}`, now)).toBeNull();
    expect(await verifyJobToken(new Uint8Array(32).fill(8), token, now)).toBeNull();
    const otherAudience = await new SignJWT({ ws: 'main', job: 'j1' }).setProtectedHeader({ alg: 'HS256' }).setIssuer('svc').setAudience('elsewhere').setSubject('ada').setExpirationTime('1h').sign(key);
    expect(await verifyJobToken(key, otherAudience, now)).toBeNull();
  });

  it('carries the scopes of what started the job, and refuses a token whose scopes are not a list of strings', async () => {
    const scoped = { ...claims, scopes: ['jobs:run:u/ada/*'] };
    const token = signJobToken(key, scoped, new Date(now.getTime() + 60_000));
    expect(await verifyJobToken(key, token, now)).toEqual(scoped);
    const bad = await new SignJWT({ ws: 'main', job: 'j1', scp: 'jobs:run' }).setProtectedHeader({ alg: 'HS256' }).setIssuer('svc').setAudience('svc-job').setSubject('ada').setExpirationTime('1h').sign(key);
    expect(await verifyJobToken(key, bad, now)).toBeNull();
  });
});
