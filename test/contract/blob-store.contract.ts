import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlobStore, UploadedPart } from '../../functions/ports.js';
import { uid } from './store-fixtures.js';

/**
 * What the core relies on from a BlobStore, run against every adapter (files under the data dir,
 * an S3 bucket) so the two shells cannot drift. One store per suite; every test writes under keys
 * of its own (see `uid`), so tests never meet even in a shared bucket.
 *
 * Keys that try to climb out (`../x`). The file store resolves keys to paths and refuses any that
 * leaves its root; S3 has no directories, so for S3 `../x` is just a key. Both fit one rule:
 *
 *   a key is either refused (put rejects and nothing is stored) or opaque (get under the very same
 *   key returns the bytes, and nothing outside the store's namespace can read them).
 *
 * "Outside" is checked through a neighbouring namespace at the same level (a sibling directory,
 * another bucket) whose name the harness gives: `../<neighbourName>/leaf` must never show up there
 * as `leaf`. This catches a path normaliser anywhere between the adapter and the bytes, not only
 * in the adapter.
 */
export interface BlobStoreHarness {
  blobs: BlobStore;
  /** A second store beside this one: the sibling directory, another bucket. */
  neighbour: BlobStore;
  /** The neighbour's name as seen one level up from this store (its directory name, its bucket name). */
  neighbourName: string;
  cleanup(): Promise<void>;
}

const MB = 1024 * 1024;

/** What an emulator lacks: s3rver has no AbortMultipartUpload (it answers 405), real S3 and LocalStack do. */
export interface BlobStoreGaps {
  abortMultipartUpload?: boolean;
}

export function describeBlobStoreContract(name: string, make: () => Promise<BlobStoreHarness>, gaps: BlobStoreGaps = {}) {
  describe(`BlobStore contract: ${name}`, () => {
    let h: BlobStoreHarness;
    beforeAll(async () => {
      h = await make();
    });
    afterAll(async () => {
      await h?.cleanup();
    });

    it('stores every byte value exactly and reads it back', async () => {
      // Each of the 256 values, in several orders: text decoding or checksum framing would show.
      const body = new Uint8Array(4 * 256);
      for (let i = 0; i < 256; i++) {
        body[i] = i;
        body[256 + i] = 255 - i;
        body[512 + i] = (i * 7) % 256;
        body[768 + i] = i % 2 ? 0 : 0xff;
      }
      const key = `${uid('blob')}/bytes.bin`;
      await h.blobs.put(key, body, 'application/octet-stream');
      expectBytes(await h.blobs.get(key), body);
    });

    it('deletes an object, and takes the delete of a missing one or of a folder of keys in its stride', async () => {
      const base = uid('blob');
      await h.blobs.put(`${base}/gone.txt`, new TextEncoder().encode('bye'), 'text/plain');
      await h.blobs.put(`${base}/kept/inner.txt`, new TextEncoder().encode('stays'), 'text/plain');
      await h.blobs.delete(`${base}/gone.txt`);
      expect(await h.blobs.get(`${base}/gone.txt`)).toBeNull();
      await h.blobs.delete(`${base}/gone.txt`);
      await h.blobs.delete(`${base}/never-was.txt`);
      await h.blobs.delete(`${base}/kept`);
      expectBytes(await h.blobs.get(`${base}/kept/inner.txt`), new TextEncoder().encode('stays'));
    });

    it('stores an empty object as empty, not as missing', async () => {
      const key = `${uid('blob')}/empty.txt`;
      await h.blobs.put(key, new Uint8Array(), 'text/plain');
      expectBytes(await h.blobs.get(key), new Uint8Array());
    });

    it('overwrites a key, also with a shorter body', async () => {
      const key = `${uid('blob')}/overwritten.txt`;
      await h.blobs.put(key, utf8('a long first version of the object'), 'text/plain');
      await h.blobs.put(key, utf8('short'), 'text/plain');
      expectBytes(await h.blobs.get(key), utf8('short'));
    });

    it('answers null for a key never stored, also under a folder that does not exist', async () => {
      const prefix = uid('blob');
      expect(await h.blobs.get(`${prefix}.bin`)).toBeNull();
      expect(await h.blobs.get(`${prefix}/no/such/folder/file.bin`)).toBeNull();
      await h.blobs.put(`${prefix}/present.bin`, utf8('x'), 'text/plain');
      expect(await h.blobs.get(`${prefix}/absent.bin`)).toBeNull();
    });

    it('answers null for a key that is only the folder of other keys', async () => {
      const prefix = uid('blob');
      await h.blobs.put(`${prefix}/folder/inner.bin`, utf8('inner'), 'text/plain');
      expect(await h.blobs.get(`${prefix}/folder`)).toBeNull();
      expect(await h.blobs.get(prefix)).toBeNull();
    });

    it('keeps keys in nested folders and with unicode names apart', async () => {
      const prefix = uid('blob');
      const keys = [
        `${prefix}/webhook_uploads/0f6c/a/b/c/d/deep.bin`,
        `${prefix}/webhook_uploads/0f6d/deep.bin`,
        `${prefix}/ünïcødé/日本語のファイル名.txt`,
        `${prefix}/ünïcødé/Ünïcødé.txt`,
        `${prefix}/emoji 🎉/with spaces & symbols (1)+=,;@.json`,
        `${prefix}/percent%2Fnot-a-slash%20.txt`,
      ];
      // Concurrently: folders created by several puts at once must all come out right.
      await Promise.all(keys.map((key) => h.blobs.put(key, utf8(`body of ${key}`), 'text/plain')));
      for (const key of keys) expectBytes(await h.blobs.get(key), utf8(`body of ${key}`));
      // Encoded and decoded spellings are different keys.
      expect(await h.blobs.get(`${prefix}/percent/not-a-slash .txt`)).toBeNull();
    });

    it(
      'stores a 5 MB object',
      async () => {
        const body = new Uint8Array(randomBytes(5 * MB));
        const key = `${uid('blob')}/large.bin`;
        await h.blobs.put(key, body, 'application/octet-stream');
        expectBytes(await h.blobs.get(key), body);
      },
      60_000,
    );

    it('streams a body in and out in many chunks, and answers its size', async () => {
      const chunks = Array.from({ length: 40 }, (_, i) => new Uint8Array(randomBytes(64 * 1024 + i)));
      const key = `${uid('blob')}/streamed.bin`;
      async function* body() {
        yield* chunks;
      }
      const size = await h.blobs.putStream(key, body(), 'application/octet-stream');
      const whole = Buffer.concat(chunks);
      expect(size).toBe(whole.byteLength);
      expect(await h.blobs.size(key)).toBe(whole.byteLength);
      const read = await h.blobs.getStream(key);
      expect(read?.size).toBe(whole.byteLength);
      expectBytes(new Uint8Array(await new Response(read!.body).arrayBuffer()), whole);
      expect(await h.blobs.getStream(`${key}.missing`)).toBeNull();
      expect(await h.blobs.size(`${key}.missing`)).toBeNull();
    });

    it('stores nothing when a streamed body fails part-way', async () => {
      const key = `${uid('blob')}/failed.bin`;
      async function* failing() {
        yield utf8('the start');
        throw new Error('the client went away');
      }
      await expect(h.blobs.putStream(key, failing(), 'text/plain')).rejects.toThrow();
      expect(await h.blobs.size(key)).toBeNull();
    });

    it(
      'joins a multipart upload in part order, and only then shows the object',
      async () => {
        const key = `${uid('blob')}/multipart.bin`;
        // S3's smallest part is 5 MiB, except the last.
        const parts = [new Uint8Array(randomBytes(5 * MB)), new Uint8Array(randomBytes(1234))];
        const uploadId = await h.blobs.createMultipartUpload(key, 'application/octet-stream');
        const stored = [];
        // Second part first: the order of arrival does not matter, the part numbers do.
        for (const n of [2, 1]) stored.push(await putPart(h.blobs, key, uploadId, n, parts[n - 1]));
        expect(await h.blobs.size(key), 'an unfinished upload is no object').toBeNull();
        const size = await h.blobs.completeMultipartUpload(key, uploadId, stored);
        expect(size).toBe(5 * MB + 1234);
        expectBytes(await h.blobs.get(key), Buffer.concat(parts));
        // Finished: it cannot complete again; an abort of it is no error.
        await expect(h.blobs.completeMultipartUpload(key, uploadId, stored)).rejects.toThrow();
        if (!gaps.abortMultipartUpload) await h.blobs.abortMultipartUpload(key, uploadId);
      },
      60_000,
    );

    it.skipIf(gaps.abortMultipartUpload)('aborts a multipart upload: it never becomes an object', async () => {
      const key = `${uid('blob')}/aborted.bin`;
      const uploadId = await h.blobs.createMultipartUpload(key, 'text/plain');
      const part = await putPart(h.blobs, key, uploadId, 1, utf8('never joined'));
      await h.blobs.abortMultipartUpload(key, uploadId);
      await expect(h.blobs.completeMultipartUpload(key, uploadId, [part])).rejects.toThrow();
      expect(await h.blobs.size(key)).toBeNull();
    });

    it('refuses a key that climbs out of the store, or keeps it as an opaque key inside', async () => {
      const leaf = `${uid('escape')}.txt`;
      const keys = [`../${h.neighbourName}/${leaf}`, `inner/../../${h.neighbourName}/${leaf}`, `./../${h.neighbourName}/${leaf}`, `../${leaf}`];
      for (const key of keys) {
        const body = utf8(`written as ${key}`);
        const put = await h.blobs.put(key, body, 'text/plain').then(
          () => 'stored' as const,
          () => 'refused' as const,
        );
        if (put === 'refused') {
          // Refused: reading it back must not find anything either.
          const read = await h.blobs.get(key).catch(() => null);
          expect(read, `get(${key}) after a refused put`).toBeNull();
        } else {
          // Opaque: readable under the same key only.
          expectBytes(await h.blobs.get(key), body, key);
        }
        expect(await h.neighbour.get(leaf), `the neighbouring store reads what was put as ${key}`).toBeNull();
        expect(await h.blobs.get(leaf), `get(${leaf}) reads what was put as ${key}`).toBeNull();
      }
    });
  });
}

/** One part, the way the store takes parts: PUT to its presigned URL (S3), or through putPart. */
async function putPart(blobs: BlobStore, key: string, uploadId: string, n: number, bytes: Uint8Array): Promise<UploadedPart> {
  if (blobs.presignPart) {
    const res = await fetch(await blobs.presignPart(key, uploadId, n, 300), { method: 'PUT', body: Buffer.from(bytes) });
    expect(res.status, await res.clone().text()).toBe(200);
    return { partNumber: n, etag: res.headers.get('etag')! };
  }
  async function* body() {
    yield bytes;
  }
  return blobs.putPart!(key, uploadId, n, body(), bytes.byteLength);
}

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Byte-exact comparison without dumping megabytes into a failure message. */
function expectBytes(actual: Uint8Array | null, expected: Uint8Array, label = 'blob') {
  expect(actual, `${label} is missing`).toBeInstanceOf(Uint8Array);
  const got = Buffer.from(actual!.buffer, actual!.byteOffset, actual!.byteLength);
  const want = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
  expect(got.length, `${label} length`).toBe(want.length);
  if (!got.equals(want)) {
    const at = got.findIndex((b, i) => b !== want[i]);
    expect.fail(`${label} differs first at byte ${at}: ${got[at]} instead of ${want[at]}`);
  }
}
