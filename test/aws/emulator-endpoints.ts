import { externalEndpoint } from './dynamodb-local.js';

/**
 * Client settings shared by the aws tier's SQS and S3 helpers. Emulators get fake credentials that
 * every one of them accepts: s3rver only knows `S3RVER`, DynamoDB Local wants letters and digits.
 * Against SVC_TEST_AWS_ENDPOINT (LocalStack, an account) the usual credential chain applies.
 */
export const EMULATOR_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
export const EMULATOR_REGION = 'us-east-1';

export function clientConfig(endpoint: string) {
  const external = externalEndpoint() !== null;
  const useRealCredentials = external && Boolean(process.env.AWS_ACCESS_KEY_ID || process.env.AWS_PROFILE);
  return {
    endpoint,
    region: external ? (process.env.AWS_REGION ?? EMULATOR_REGION) : EMULATOR_REGION,
    ...(useRealCredentials ? {} : { credentials: EMULATOR_CREDENTIALS }),
  };
}
