import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { BlobStore } from '../../ports.js';

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
