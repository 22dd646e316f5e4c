/**
 * Object storage for uploads, large payloads and flows' shared folders (local: files under the
 * data dir; AWS: S3). Keys are the core's; adapters store them as they are.
 *
 * Small objects go whole (`put`/`get`); uploads of any size stream (`putStream`/`getStream`) or
 * arrive in parts (the multipart methods), so no adapter ever holds a large file in memory.
 */
export interface BlobStore {
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
  get(key: string): Promise<Uint8Array | null>;
  /** Removes the object if there is one. */
  delete(key: string): Promise<void>;

  /**
   * Stores a body read chunk by chunk, holding a bounded part of it at a time; answers the number
   * of bytes stored. Nothing is stored under `key` when the body fails part-way.
   */
  putStream(key: string, body: AsyncIterable<Uint8Array>, contentType: string): Promise<number>;
  /** The object's bytes as a stream, with its size; null when there is none. */
  getStream(key: string): Promise<{ body: ReadableStream<Uint8Array>; size: number } | null>;
  /**
   * A URL that downloads the object straight from the storage, as an attachment named `fileName`
   * (S3: a presigned GetObject URL). Absent where downloads come through the service (getStream).
   */
  presignGet?(key: string, fileName: string, expiresInSeconds: number): Promise<string>;
  /** The object's size; null when there is none (an upload not completed yet is none). */
  size(key: string): Promise<number | null>;

  /** Starts a multipart upload of `key`: the object appears only when it is completed. Answers its id. */
  createMultipartUpload(key: string, contentType: string): Promise<string>;
  /**
   * Where a client PUTs one part straight to the storage (S3: a presigned UploadPart URL).
   * Absent where parts come through the service instead (`putPart`).
   */
  presignPart?(key: string, uploadId: string, partNumber: number, expiresInSeconds: number): Promise<string>;
  /** Stores one part that came through the service; a part over `maxBytes` is refused (UploadRejected). */
  putPart?(key: string, uploadId: string, partNumber: number, body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<UploadedPart>;
  /**
   * Joins the parts, in part-number order, into the object; answers its size. Parts that are
   * missing or whose ETag differs, or an unknown upload, are refused (UploadRejected).
   */
  completeMultipartUpload(key: string, uploadId: string, parts: UploadedPart[]): Promise<number>;
  /** Drops the parts of an upload; an unknown or finished upload is no error. */
  abortMultipartUpload(key: string, uploadId: string): Promise<void>;
}

/** A stored part as its store acknowledged it: the ETag it answered the PUT with. */
export interface UploadedPart {
  partNumber: number;
  etag: string;
}

/**
 * The store refused a part or a completion for a reason of the caller's making: `too_large` (a
 * part over its size), else the parts or the upload are not what the store holds. The core answers 4xx.
 */
export class UploadRejected extends Error {
  override readonly name = 'UploadRejected';
  constructor(
    message: string,
    readonly reason: 'too_large' | 'invalid' = 'invalid',
  ) {
    super(message);
  }
}
