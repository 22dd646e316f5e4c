import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UploadRejected, type BlobStore, type UploadedPart } from '../../ports.js';

/**
 * Where unfinished multipart uploads keep their parts, inside the root: keys start with a
 * workspace id, which never starts with a dot, so no key reaches in here.
 */
const STAGING = '.multipart';
const UPLOAD_ID = /^[0-9a-f]{32}$/;
/** Parts of uploads nobody completed or aborted are removed after this (S3's lifecycle rule does the same). */
const STALE_UPLOAD_MS = 24 * 3600 * 1000;

/** Object storage as files under the data directory. */
export class FileBlobStore implements BlobStore {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    const file = this.fileFor(key);
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, body, { mode: 0o600 });
  }

  async get(key: string): Promise<Uint8Array | null> {
    try {
      return await readFile(this.fileFor(key));
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    // A folder of other keys is no key: it stays, as it would on S3.
    await rm(this.fileFor(key), { force: true }).catch((e: NodeJS.ErrnoException) => {
      if (!['EISDIR', 'ENOTDIR', 'ERR_FS_EISDIR'].includes(e.code ?? '')) throw e;
    });
  }

  async putStream(key: string, body: AsyncIterable<Uint8Array>): Promise<number> {
    const file = this.fileFor(key);
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    // Written beside the key and renamed: a reader never sees half a file, a failure leaves none.
    const partial = `${file}.${randomBytes(8).toString('hex')}.partial`;
    let size = 0;
    try {
      await pipeline(Readable.from(body), counter((n) => (size += n)), createWriteStream(partial, { mode: 0o600 }));
      await rename(partial, file);
    } catch (e) {
      await rm(partial, { force: true });
      throw e;
    }
    return size;
  }

  async getStream(key: string): Promise<{ body: ReadableStream<Uint8Array>; size: number } | null> {
    const file = this.fileFor(key);
    const size = await this.size(key);
    if (size === null) return null;
    return { body: Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>, size };
  }

  async size(key: string): Promise<number | null> {
    try {
      const info = await stat(this.fileFor(key));
      return info.isFile() ? info.size : null;
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  async createMultipartUpload(key: string, contentType: string): Promise<string> {
    this.fileFor(key);
    // Housekeeping beside the request: a failure here must neither fail the upload nor go unhandled.
    this.removeStaleUploads().catch(() => undefined);
    const uploadId = randomBytes(16).toString('hex');
    const dir = this.stagingDir(uploadId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(join(dir, 'upload.json'), JSON.stringify({ key, contentType }), { mode: 0o600 });
    return uploadId;
  }

  async putPart(key: string, uploadId: string, partNumber: number, body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<UploadedPart> {
    const dir = await this.openUpload(key, uploadId);
    const file = join(dir, `${partNumber}.part`);
    const partial = `${file}.${randomBytes(8).toString('hex')}.partial`;
    const md5 = createHash('md5');
    let size = 0;
    try {
      const limit = counter((n) => {
        size += n;
        if (size > maxBytes) throw new UploadRejected(`part ${partNumber} is larger than the part size of ${maxBytes} bytes`, 'too_large');
      }, md5);
      await pipeline(Readable.from(body), limit, createWriteStream(partial, { mode: 0o600 }));
      // As S3 does: the ETag is the MD5 of the part, quoted; the client sends it back at completion.
      const etag = `"${md5.digest('hex')}"`;
      await writeFile(`${file}.etag`, etag, { mode: 0o600 });
      await rename(partial, file);
      return { partNumber, etag };
    } catch (e) {
      await rm(partial, { force: true });
      throw e;
    }
  }

  async completeMultipartUpload(key: string, uploadId: string, parts: UploadedPart[]): Promise<number> {
    const dir = await this.openUpload(key, uploadId);
    const ordered = [...parts].sort((a, b) => a.partNumber - b.partNumber);
    for (const part of ordered) {
      const etag = await readFile(join(dir, `${part.partNumber}.part.etag`), 'utf8').catch(() => null);
      if (etag === null) throw new UploadRejected(`part ${part.partNumber} was never uploaded`);
      if (unquote(etag) !== unquote(part.etag)) throw new UploadRejected(`part ${part.partNumber}: the ETag does not match the part stored`);
    }
    async function* joined() {
      for (const part of ordered) yield* createReadStream(join(dir, `${part.partNumber}.part`));
    }
    const size = await this.putStream(key, joined());
    await rm(dir, { recursive: true, force: true });
    return size;
  }

  async abortMultipartUpload(_key: string, uploadId: string): Promise<void> {
    if (UPLOAD_ID.test(uploadId)) await rm(this.stagingDir(uploadId), { recursive: true, force: true });
  }

  /** The staging folder of an upload started for this very key, or UploadRejected. */
  private async openUpload(key: string, uploadId: string): Promise<string> {
    if (!UPLOAD_ID.test(uploadId)) throw new UploadRejected('no such upload');
    const dir = this.stagingDir(uploadId);
    const meta = await readFile(join(dir, 'upload.json'), 'utf8').catch(() => null);
    if (meta === null || (JSON.parse(meta) as { key: string }).key !== key) throw new UploadRejected('no such upload (completed, aborted or never started)');
    return dir;
  }

  private stagingDir(uploadId: string): string {
    return join(this.root, STAGING, uploadId);
  }

  private async removeStaleUploads(): Promise<void> {
    const base = join(this.root, STAGING);
    const names = await readdir(base).catch(() => [] as string[]);
    const now = Date.now();
    for (const name of names) {
      const info = await stat(join(base, name)).catch(() => null);
      if (info && now - info.mtimeMs > STALE_UPLOAD_MS) await rm(join(base, name), { recursive: true, force: true });
    }
  }

  // Keys come from the core, but a key must never reach outside the root all the same.
  private fileFor(key: string): string {
    const file = resolve(this.root, key);
    if (!file.startsWith(this.root + sep) || file.startsWith(join(this.root, STAGING) + sep)) throw new Error(`blob key escapes the store: ${key}`);
    return file;
  }
}

/** Passes chunks through, telling `onChunk` their sizes (which may throw to stop the stream). */
function counter(onChunk: (bytes: number) => void, hash?: ReturnType<typeof createHash>): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        onChunk(chunk.byteLength);
        hash?.update(chunk);
        done(null, chunk);
      } catch (e) {
        done(e as Error);
      }
    },
  });
}

function unquote(etag: string): string {
  return etag.trim().replace(/^"|"$/g, '');
}

// A folder of other keys, or a path below a file, is no key at all: S3 answers null there too.
function isMissing(e: unknown): boolean {
  return ['ENOENT', 'EISDIR', 'ENOTDIR'].includes((e as NodeJS.ErrnoException).code ?? '');
}
