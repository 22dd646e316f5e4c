import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { externalEndpoint } from './dynamodb-local.js';
import { clientConfig } from './emulator-endpoints.js';

/**
 * S3 for the aws tier: `s3rver` in this process on a free loopback port with a temporary data
 * directory, or whatever SVC_TEST_AWS_ENDPOINT names.
 */
export interface S3Endpoint {
  endpoint: string;
  stop(): Promise<void>;
}

/** Where s3rver listens: loopback, but not 127.0.0.1 (see startS3). */
export const S3_EMULATOR_ADDRESS = '127.0.0.2';

/** `parentDir` holds s3rver's files (a temporary directory by default); they go with `stop`. */
export async function startS3(parentDir: string = tmpdir()): Promise<S3Endpoint> {
  const external = externalEndpoint();
  if (external) return { endpoint: external, stop: async () => {} };
  const directory = mkdtempSync(join(parentDir, 'svc-s3rver-'));
  // Signatures are checked against s3rver's own key pair; the credentials are fake anyway. On a
  // loopback address of its own, so that jobs behind the network boundary may be allowed this
  // emulator (S3_EMULATOR_ADDRESS) without being allowed the service or anything else on 127.0.0.1.
  const server = new S3rver({ address: S3_EMULATOR_ADDRESS, port: 0, silent: true, directory, allowMismatchedSignatures: true });
  const { port } = await server.run();
  return {
    endpoint: `http://${S3_EMULATOR_ADDRESS}:${port}`,
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** Path-style and checksums only when required, as the S3BlobStore sets them for an emulator. */
export function s3Client(endpoint: string): S3Client {
  return new S3Client({ ...clientConfig(endpoint), forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
}

/** A bucket of its own (names are global on AWS), emptied and deleted afterwards. */
export async function createTestBucket(client: S3Client): Promise<{ bucketName: string; drop(): Promise<void> }> {
  const bucketName = `svc-test-${randomUUID()}`;
  await client.send(new CreateBucketCommand({ Bucket: bucketName }));
  return {
    bucketName,
    async drop() {
      for (;;) {
        const listed = await client.send(new ListObjectsV2Command({ Bucket: bucketName }));
        const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key! }));
        if (keys.length === 0) break;
        await client.send(new DeleteObjectsCommand({ Bucket: bucketName, Delete: { Objects: keys } }));
      }
      await client.send(new DeleteBucketCommand({ Bucket: bucketName }));
    },
  };
}
