/**
 * DynamoDB Local and moto endpoints that outlive one AWS shell server: the test run's shared ones
 * (shared-emulators.ts). The harness hands them to the shell server in its environment under these
 * names (no imports here: the harness of every http tier loads this).
 */
export interface SharedEndpoints {
  dynamodb?: string;
  kms?: string;
}

const VARIABLES = { dynamodb: 'SVC_TEST_SHARED_DYNAMODB_ENDPOINT', kms: 'SVC_TEST_SHARED_KMS_ENDPOINT' } as const;

export function sharedEndpointsToEnv(shared: SharedEndpoints): Record<string, string> {
  const env: Record<string, string> = {};
  if (shared.dynamodb) env[VARIABLES.dynamodb] = shared.dynamodb;
  if (shared.kms) env[VARIABLES.kms] = shared.kms;
  return env;
}

export function sharedEndpointsFromEnv(env: NodeJS.ProcessEnv): SharedEndpoints {
  return { dynamodb: env[VARIABLES.dynamodb] || undefined, kms: env[VARIABLES.kms] || undefined };
}
