import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3ServiceException,
  UploadPartCommand,
  type S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable } from 'node:stream';
import { UploadRejected, type BlobStore, type UploadedPart } from '../../ports.js';

/** Errors S3 answers a completion with when the caller's part list is wrong. */
const REJECTED_COMPLETION = new Set(['InvalidPart', 'InvalidPartOrder', 'NoSuchUpload', 'EntityTooSmall']);
/** lib-storage's part size while streaming a body of unknown length: memory held per upload is about this, times its queue. */
const STREAM_PART_BYTES = 8 * 1024 * 1024;

/** Object storage in the service's S3 bucket; keys are the core's, used as they are. */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(opts: { client: S3Client; bucketName: string }) {
    this.client = opts.client;
    this.bucket = opts.bucketName;
  }

  async put(key: string, body: Uint8Array, contentType: string): Promise<void> {
    assertPlainKey(key);
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType }));
  }

  async get(key: string): Promise<Uint8Array | null> {
    assertPlainKey(key);
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return object.Body ? await object.Body.transformToByteArray() : new Uint8Array();
    } catch (e) {
      if (e instanceof NoSuchKey) return null;
      throw e;
    }
  }

  async putStream(key: string, body: AsyncIterable<Uint8Array>, contentType: string): Promise<number> {
    assertPlainKey(key);
    let size = 0;
    const counted = Readable.from(
      (async function* () {
        for await (const chunk of body) {
          size += chunk.byteLength;
          yield chunk;
        }
      })(),
    );
    // lib-storage sends small bodies as one PutObject and large ones as a multipart upload, aborted on failure.
    await new Upload({ client: this.client, params: { Bucket: this.bucket, Key: key, Body: counted, ContentType: contentType }, partSize: STREAM_PART_BYTES, queueSize: 2 }).done();
    return size;
  }

  async getStream(key: string): Promise<{ body: ReadableStream<Uint8Array>; size: number } | null> {
    assertPlainKey(key);
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const body = object.Body ? (object.Body.transformToWebStream() as ReadableStream<Uint8Array>) : new Blob([]).stream();
      return { body, size: object.ContentLength ?? 0 };
    } catch (e) {
      if (e instanceof NoSuchKey) return null;
      throw e;
    }
  }

  async size(key: string): Promise<number | null> {
    assertPlainKey(key);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (e) {
      if (e instanceof NotFound || e instanceof NoSuchKey) return null;
      throw e;
    }
  }

  async createMultipartUpload(key: string, contentType: string): Promise<string> {
    assertPlainKey(key);
    const created = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentType }));
    if (!created.UploadId) throw new Error('S3 answered CreateMultipartUpload without an UploadId');
    return created.UploadId;
  }

  /** The client PUTs the part to S3 itself: the api function never carries the bytes. */
  async presignPart(key: string, uploadId: string, partNumber: number, expiresInSeconds: number): Promise<string> {
    assertPlainKey(key);
    const command = new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber: partNumber });
    return getSignedUrl(this.client, command, { expiresIn: expiresInSeconds });
  }

  /** Large files leave S3 directly: the api function's streamed responses stop at 200 MB. */
  async presignGet(key: string, fileName: string, expiresInSeconds: number): Promise<string> {
    assertPlainKey(key);
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentType: 'application/octet-stream',
      ResponseContentDisposition: `attachment; filename="${fileName}"`,
    });
    return getSignedUrl(this.client, command, { expiresIn: expiresInSeconds });
  }

  async completeMultipartUpload(key: string, uploadId: string, parts: UploadedPart[]): Promise<number> {
    assertPlainKey(key);
    const ordered = [...parts].sort((a, b) => a.partNumber - b.partNumber).map((p) => ({ PartNumber: p.partNumber, ETag: p.etag }));
    try {
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: ordered } }));
    } catch (e) {
      if (e instanceof S3ServiceException && REJECTED_COMPLETION.has(e.name)) throw new UploadRejected(`S3 refused the parts: ${e.name}: ${e.message}`);
      throw e;
    }
    return (await this.size(key)) ?? 0;
  }

  async abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    assertPlainKey(key);
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }));
    } catch (e) {
      if (!(e instanceof S3ServiceException && e.name === 'NoSuchUpload')) throw e;
    }
  }

  /** S3 answers a delete of a missing key with success too. */
  async delete(key: string): Promise<void> {
    assertPlainKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}

/**
 * The SDK sends `.` and `..` segments unescaped in the URL, and some S3-compatible servers resolve
 * them into another bucket; the file store refuses them too, so both shells take the same keys.
 */
function assertPlainKey(key: string): void {
  if (key.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new Error(`blob key has an empty, '.' or '..' segment: ${key}`);
  }
}

/**
 * Client settings for the bucket. Against an S3 emulator (an endpoint override, as the SDK reads
 * it from AWS_ENDPOINT_URL[_S3]) buckets are addressed by path, and checksums are only sent when
 * an operation requires them: s3rver stores streamed uploads with the SDK's default checksum
 * framing corrupted.
 */
export function s3ClientConfig(env: NodeJS.ProcessEnv = process.env): S3ClientConfig {
  const emulated = Boolean(env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL);
  return emulated ? { forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' } : {};
}
