import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../functions/adapters/local/sqlite-store.js';
import { authenticate, issueToken, legacyTokenHash } from '../../../functions/core/identity/auth.js';
import type { CoreDeps } from '../../../functions/core/deps.js';

/**
 * Issue 15: tokens are stored as a keyed digest beside a short non-secret id, and tokens stored the
 * old way (unsalted SHA-256, 12 characters in clear) keep working and are rewritten on first use.
 * Against the real SQLite store; the store calls used are in the store contract of both shells.
 */
let dir: string;
let store: SqliteStore;
const signingKey = new Uint8Array(32).fill(7);
const clock = { now: () => new Date('2030-01-01T00:00:00Z') };
const deps = () => ({ store, clock, config: { signingKey } }) as unknown as Pick<CoreDeps, 'store' | 'clock' | 'config'>;
const fields = { label: 't', owner: 'ann', kind: 'api' as const, workspace_id: null, scopes: null, expires_at: null };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-token-storage-'));
  store = new SqliteStore(join(dir, 'svc.db'));
  await store.createUser({ username: 'ann', email: 'ann@example.com', is_admin: false, password_hash: null, created_at: clock.now().toISOString() });
});
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every byte of the data directory, including the SQLite WAL. */
function dataDirBytes(): string {
  return readdirSync(dir).map((f) => readFileSync(join(dir, f)).toString('latin1')).join('\n');
}

describe('stored tokens', () => {
  it('keep neither the token nor any 8-character piece of its secret in the data directory', async () => {
    const token = await issueToken({ store, clock, signingKey }, fields);
    expect(token).toMatch(/^svc_[a-z0-9]{8}_[\w-]{43}$/);
    const secret = token.slice(13);
    const bytes = dataDirBytes();
    for (let i = 0; i + 8 <= secret.length; i++) expect(bytes).not.toContain(secret.slice(i, i + 8));
    expect(bytes).not.toContain(legacyTokenHash(token));
    expect((await store.listTokens('ann'))[0].prefix).toBe(token.slice(0, 12));
    expect((await authenticate(deps(), { bearer: token, session: null })).username).toBe('ann');
  });

  it('depend on the instance key: the same token under another key is unknown', async () => {
    const token = await issueToken({ store, clock, signingKey }, fields);
    const other = { store, clock, config: { signingKey: new Uint8Array(32).fill(8) } } as unknown as Pick<CoreDeps, 'store' | 'clock' | 'config'>;
    await expect(authenticate(other, { bearer: token, session: null })).rejects.toMatchObject({ status: 401 });
  });

  it('stored the old way keep working, and are moved under the keyed digest on first use', async () => {
    const old = 'svc_' + 'Q'.repeat(43);
    const legacyHash = legacyTokenHash(old);
    await store.putToken({ ...fields, label: 'old', token_hash: legacyHash, prefix: old.slice(0, 12), created_at: clock.now().toISOString(), expiry_notice_at: null });

    expect((await authenticate(deps(), { bearer: old, session: null })).username).toBe('ann');
    expect(await store.getToken(legacyHash)).toBeNull();
    const moved = (await store.listTokens('ann')).find((t) => t.label === 'old');
    expect(moved?.prefix).toBe('svc_QQQQ');
    expect(moved?.token_hash).not.toBe(legacyHash);
    // And again, now found under its digest.
    expect((await authenticate(deps(), { bearer: old, session: null })).username).toBe('ann');
  });
});
