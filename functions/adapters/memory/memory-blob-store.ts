import { createHash, randomBytes } from 'node:crypto';
import { UploadRejected, type BlobStore, type UploadedPart } from '../../ports.js';

/** Objects in a map. Keys are opaque (no paths, nothing to climb out of); bytes are copied in and out. */
export class MemoryBlobStore implements BlobStore {
  private readonly objects = new Map<string, Uint8Array>();
  private readonly uploads = new Map<string, { key: string; parts: Map<number, { bytes: Uint8Array; etag: string }> }>();

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

  async putStream(key: string, body: AsyncIterable<Uint8Array>, _contentType: string): Promise<number> {
    const bytes = await collect(body, Infinity);
    this.objects.set(key, bytes);
    return bytes.byteLength;
  }

  async getStream(key: string): Promise<{ body: ReadableStream<Uint8Array>; size: number } | null> {
    const body = this.objects.get(key);
    return body ? { body: new Blob([Uint8Array.from(body)]).stream(), size: body.byteLength } : null;
  }

  async size(key: string): Promise<number | null> {
    return this.objects.get(key)?.byteLength ?? null;
  }

  async createMultipartUpload(key: string): Promise<string> {
    const uploadId = randomBytes(16).toString('hex');
    this.uploads.set(uploadId, { key, parts: new Map() });
    return uploadId;
  }

  async putPart(key: string, uploadId: string, partNumber: number, body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<UploadedPart> {
    const upload = this.openUpload(key, uploadId);
    const bytes = await collect(body, maxBytes);
    const etag = `"${createHash('md5').update(bytes).digest('hex')}"`;
    upload.parts.set(partNumber, { bytes, etag });
    return { partNumber, etag };
  }

  async completeMultipartUpload(key: string, uploadId: string, parts: UploadedPart[]): Promise<number> {
    const upload = this.openUpload(key, uploadId);
    const chunks = [...parts].sort((a, b) => a.partNumber - b.partNumber).map((p) => {
      const stored = upload.parts.get(p.partNumber);
      if (!stored) throw new UploadRejected(`part ${p.partNumber} was never uploaded`);
      if (stored.etag.replace(/"/g, '') !== p.etag.replace(/"/g, '')) throw new UploadRejected(`part ${p.partNumber}: the ETag does not match the part stored`);
      return stored.bytes;
    });
    const joined = Buffer.concat(chunks);
    this.objects.set(key, new Uint8Array(joined));
    this.uploads.delete(uploadId);
    return joined.byteLength;
  }

  async abortMultipartUpload(_key: string, uploadId: string): Promise<void> {
    this.uploads.delete(uploadId);
  }

  private openUpload(key: string, uploadId: string) {
    const upload = this.uploads.get(uploadId);
    if (!upload || upload.key !== key) throw new UploadRejected('no such upload (completed, aborted or never started)');
    return upload;
  }
}

async function collect(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new UploadRejected(`the part is larger than the part size of ${maxBytes} bytes`, 'too_large');
    chunks.push(Uint8Array.from(chunk));
  }
  return new Uint8Array(Buffer.concat(chunks));
}
