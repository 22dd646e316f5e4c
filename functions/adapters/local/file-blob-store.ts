import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import type { BlobStore } from '../../ports.js';

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
      // A folder of other keys, or a path below a file, is no key at all: S3 answers null there too.
      if (['ENOENT', 'EISDIR', 'ENOTDIR'].includes((e as NodeJS.ErrnoException).code ?? '')) return null;
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    // A folder of other keys is no key: it stays, as it would on S3.
    await rm(this.fileFor(key), { force: true }).catch((e: NodeJS.ErrnoException) => {
      if (!['EISDIR', 'ENOTDIR', 'ERR_FS_EISDIR'].includes(e.code ?? '')) throw e;
    });
  }

  // Keys come from the core, but a key must never reach outside the root all the same.
  private fileFor(key: string): string {
    const file = resolve(this.root, key);
    if (!file.startsWith(this.root + sep)) throw new Error(`blob key escapes the store: ${key}`);
    return file;
  }
}
