import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { badRequest } from '../common/errors.js';
import { getEntityValue, tryCreateEntity, updateEntity } from '../store/entities.js';
import { parseBody } from '../common/validation.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * The workspace sync key: what secret variables are encrypted with when the CLI pulls them
 * (svc.yaml `skipSecrets: false`, without `plainSecrets`), so that the files can be committed.
 * The key never leaves the server unless an admin asks for it (`includeKey`), to give it to
 * another workspace or instance that must decrypt the same files; it is stored sealed by the
 * instance's SecretCipher (AES key file locally, KMS on AWS).
 *
 * Encryption is deterministic (the IV is an HMAC of path and value, as in SIV constructions), so
 * pulling an unchanged secret writes the same bytes and a sync sees no change; the path is bound
 * as associated data, so a ciphertext moved to another variable does not decrypt.
 */

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'svc-sync:v1:';
const CONTEXT = (workspaceId: string) => ({ workspace: workspaceId, purpose: 'sync_key' });


export const setKeyBody = z.strictObject({ key: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'a 32-byte key in base64url (43 characters)') });

async function loadKey(deps: Pick<CoreDeps, 'store' | 'clock' | 'cipher'>, workspaceId: string): Promise<Buffer> {
  for (;;) {
    const stored = await getEntityValue(deps.store, 'sync_key', workspaceId, 'key');
    if (stored) return Buffer.from(await deps.cipher.decrypt(stored.sealed, CONTEXT(workspaceId)), 'base64url');
    const fresh = randomBytes(KEY_BYTES);
    const value = { sealed: await deps.cipher.encrypt(fresh.toString('base64url'), CONTEXT(workspaceId)) };
    // Two first uses at once: one creates the key, the other reads it on the next turn.
    if (await tryCreateEntity(deps.store, deps.clock, 'sync_key', workspaceId, 'key', value)) return fresh;
  }
}

function subkeys(key: Buffer): { enc: Buffer; iv: Buffer } {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), info, KEY_BYTES));
  return { enc: derive('svc sync encryption'), iv: derive('svc sync iv') };
}

/** Admins only: the key, for `includeKey`. */
export async function getSyncKey(deps: Pick<CoreDeps, 'store' | 'clock' | 'cipher'>, rights: Rights): Promise<{ key: string }> {
  rights.check('workspaces', 'write');
  return { key: (await loadKey(deps, rights.workspaceId)).toString('base64url') };
}

/** Admins only: replaces the key (a push with `includeKey` brings another workspace's). */
export async function setSyncKey(deps: Pick<CoreDeps, 'store' | 'clock' | 'cipher'>, rights: Rights, body: unknown): Promise<{ key: string }> {
  rights.check('workspaces', 'write');
  const { key } = parseBody(setKeyBody, body);
  await loadKey(deps, rights.workspaceId);
  const sealed = await deps.cipher.encrypt(key, CONTEXT(rights.workspaceId));
  await updateEntity(deps.store, deps.clock, 'sync_key', rights.workspaceId, 'key', 'sync key', () => ({ sealed }));
  return { key };
}

export async function sealForSync(deps: Pick<CoreDeps, 'store' | 'clock' | 'cipher'>, workspaceId: string, path: string, plaintext: string): Promise<string> {
  const { enc, iv: ivKey } = subkeys(await loadKey(deps, workspaceId));
  const iv = createHmac('sha256', ivKey).update(path).update('\0').update(plaintext, 'utf8').digest().subarray(0, IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', enc, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(path, 'utf8'));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${PREFIX}${iv.toString('base64url')}:${sealed.toString('base64url')}`;
}

/** 400 when the value was not sealed for this path under this workspace's key. */
export async function openFromSync(deps: Pick<CoreDeps, 'store' | 'clock' | 'cipher'>, workspaceId: string, path: string, text: string): Promise<string> {
  const refuse = () =>
    badRequest('invalid_encrypted_value', `value: not encrypted for ${path} with this workspace's sync key (push the key with includeKey, or push the secret in plain text)`, { field: 'value' });
  if (!text.startsWith(PREFIX)) throw refuse();
  const [ivText, sealedText] = text.slice(PREFIX.length).split(':');
  const iv = Buffer.from(ivText ?? '', 'base64url');
  const sealed = Buffer.from(sealedText ?? '', 'base64url');
  if (iv.length !== IV_BYTES || sealed.length < TAG_BYTES) throw refuse();
  const { enc } = subkeys(await loadKey(deps, workspaceId));
  try {
    const decipher = createDecipheriv('aes-256-gcm', enc, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(path, 'utf8'));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw refuse();
  }
}
