import type { BlobStore } from '../../ports.js';

/** Objects in a map. Keys are opaque (no paths, nothing to climb out of); bytes are copied in and out. */
export class MemoryBlobStore implements BlobStore {
  private readonly objects = new Map<string, Uint8Array>();

  async put(key: string, body: Uint8Array, _contentType: string): Promise<void> {
    this.objects.set(key, Uint8Array.from(body));
  }

  async get(key: string): Promise<Uint8Array | null> {
    const body = this.objects.get(key);
    return body ? Uint8Array.from(body) : null;
  }

  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }
}
