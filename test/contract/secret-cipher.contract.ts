import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SecretCipher } from '../../functions/ports.js';

/**
 * What the core relies on from a SecretCipher, run against every adapter (AES-256-GCM with the
 * data directory's key, KMS envelope encryption) so the two shells cannot drift. The text of a
 * ciphertext is opaque here: the suite only stores it, changes it and hands it back.
 */
export interface SecretCipherHarness {
  cipher: SecretCipher;
  cleanup(): Promise<void>;
}

const CONTEXT = { workspace: 'main', path: 'u/alice/db_password' };

export function describeSecretCipherContract(name: string, make: () => Promise<SecretCipherHarness>) {
  describe(`SecretCipher contract: ${name}`, () => {
    let h: SecretCipherHarness;
    beforeAll(async () => {
      h = await make();
    });
    afterAll(async () => {
      await h?.cleanup();
    });

    const roundTrip = async (plaintext: string) => h.cipher.decrypt(await h.cipher.encrypt(plaintext, CONTEXT), CONTEXT);

    it('gives back exactly what it encrypted: empty, unicode, 60 KB', async () => {
      const large = Array.from({ length: 60 * 1024 }, (_, i) => String.fromCharCode(32 + ((i * 7) % 95))).join('');
      for (const plaintext of ['', 's3cr3t', 'pässwörd 密码 🔑 \u0000\n\t"\'\\', large]) {
        expect(await roundTrip(plaintext)).toBe(plaintext);
      }
    });

    it('binds the context independently of the order its keys were written in', async () => {
      const ciphertext = await h.cipher.encrypt('ordered', { workspace: 'main', path: 'f/x' });
      expect(await h.cipher.decrypt(ciphertext, { path: 'f/x', workspace: 'main' })).toBe('ordered');
    });

    it('encrypts the same plaintext differently every time', async () => {
      const [a, b] = await Promise.all([h.cipher.encrypt('same', CONTEXT), h.cipher.encrypt('same', CONTEXT)]);
      expect(a).not.toBe(b);
    });

    it('never shows the plaintext in the ciphertext', async () => {
      const plaintext = 'hunter2-correct-horse-battery-staple';
      const ciphertext = await h.cipher.encrypt(plaintext, CONTEXT);
      expect(ciphertext).not.toContain(plaintext);
      expect(ciphertext).not.toContain('hunter2');
      expect(ciphertext).not.toContain(Buffer.from(plaintext).toString('base64url').slice(0, 16));
      expect(ciphertext).not.toContain(Buffer.from(plaintext).toString('hex').slice(0, 16));
    });

    it('refuses another context: another path, another workspace, an extra or a missing entry', async () => {
      const ciphertext = await h.cipher.encrypt('bound', CONTEXT);
      const others: Record<string, string>[] = [
        { ...CONTEXT, path: 'u/alice/other' },
        { ...CONTEXT, workspace: 'other' },
        { ...CONTEXT, extra: 'x' },
        { workspace: CONTEXT.workspace },
        {},
        // Values moved between keys must not read as the same context.
        { workspace: CONTEXT.path, path: CONTEXT.workspace },
      ];
      for (const context of others) {
        await expect(h.cipher.decrypt(ciphertext, context), JSON.stringify(context)).rejects.toThrow();
      }
    });

    it('refuses a ciphertext with any one character changed, cut short or extended', async () => {
      const ciphertext = await h.cipher.encrypt('tamper-evident', CONTEXT);
      const tampered = [ciphertext.slice(0, -1), `${ciphertext}A`, `${ciphertext}:`, '', 'v1', ciphertext.slice(0, ciphertext.length / 2)];
      for (let i = 0; i < ciphertext.length; i++) {
        tampered.push(ciphertext.slice(0, i) + (ciphertext[i] === 'A' ? 'B' : 'A') + ciphertext.slice(i + 1));
      }
      // One at a time: an emulator answering hundreds of requests at once is not what is tested.
      const opened: string[] = [];
      for (const text of tampered) {
        if (await h.cipher.decrypt(text, CONTEXT).then(() => true, () => false)) opened.push(text);
      }
      expect(opened).toEqual([]);
    });

    it('does not put the plaintext into the error of a failed decryption', async () => {
      const plaintext = 'never-in-an-error-message';
      const ciphertext = await h.cipher.encrypt(plaintext, CONTEXT);
      const error = await h.cipher.decrypt(ciphertext, { ...CONTEXT, path: 'elsewhere' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(String((error as Error).message)).not.toContain(plaintext);
      expect(JSON.stringify(error)).not.toContain(plaintext);
    });
  });
}
