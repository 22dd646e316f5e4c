import { afterAll, beforeAll } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { S3BlobStore } from '../../functions/adapters/aws/s3-blob-store.js';
import { createTestBucket, s3Client, startS3, type S3Endpoint } from '../aws/s3-local.js';
import { describeBlobStoreContract } from './blob-store.contract.js';
import { externalEndpoint } from '../aws/dynamodb-local.js';

// s3rver by default; LocalStack or a real account when SVC_TEST_AWS_ENDPOINT is set.
let s3: S3Endpoint | undefined;
let client: S3Client;

beforeAll(async () => {
  s3 = await startS3();
  client = s3Client(s3.endpoint);
});

afterAll(async () => {
  client?.destroy();
  await s3?.stop();
});

describeBlobStoreContract(
  'S3BlobStore',
  async () => {
    // The neighbouring namespace of a bucket is another bucket.
    const [own, other] = await Promise.all([createTestBucket(client), createTestBucket(client)]);
    return {
      blobs: new S3BlobStore({ client, bucketName: own.bucketName }),
      neighbour: new S3BlobStore({ client, bucketName: other.bucketName }),
      neighbourName: other.bucketName,
      cleanup: async () => {
        await Promise.all([own.drop(), other.drop()]);
      },
    };
  },
  { abortMultipartUpload: !externalEndpoint() },
);
