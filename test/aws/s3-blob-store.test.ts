import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { S3BlobStore, s3ClientConfig } from '../../functions/adapters/aws/s3-blob-store.js';
import { createTestBucket, s3Client, startS3, type S3Endpoint } from './s3-local.js';

let s3: S3Endpoint;
let client: S3Client;
let bucket: { bucketName: string; drop(): Promise<void> };
let blobs: S3BlobStore;

beforeAll(async () => {
  s3 = await startS3();
  client = s3Client(s3.endpoint);
  bucket = await createTestBucket(client);
  blobs = new S3BlobStore({ client, bucketName: bucket.bucketName });
});
afterAll(async () => {
  await bucket?.drop();
  client?.destroy();
  await s3?.stop();
});

describe('S3BlobStore', () => {
  it('stores bytes exactly, with their content type, under the key the core gives', async () => {
    // Every byte value: a checksum-framed upload that an emulator mis-stores would show here.
    const body = new Uint8Array(256 * 1024).map((_, i) => (i * 7) % 256);
    const key = 'webhook_uploads/ws/0f6c/üpload name.bin';
    await blobs.put(key, body, 'application/octet-stream');
    expect(await blobs.get(key)).toEqual(body);
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket.bucketName, Key: key }));
    expect(head.ContentType).toBe('application/octet-stream');
    expect(head.ContentLength).toBe(body.length);
  });

  it('answers null for a key that was never stored, and stores empty objects', async () => {
    expect(await blobs.get('webhook_uploads/none/here.txt')).toBeNull();
    await blobs.put('empty', new Uint8Array(), 'text/plain');
    expect(await blobs.get('empty')).toEqual(new Uint8Array());
  });

  it('configures the client for an emulator only when an endpoint is overridden', () => {
    expect(s3ClientConfig({})).toEqual({});
    for (const env of [{ AWS_ENDPOINT_URL: 'http://127.0.0.1:1' }, { AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:1' }]) {
      expect(s3ClientConfig(env)).toEqual({ forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
    }
  });
});
