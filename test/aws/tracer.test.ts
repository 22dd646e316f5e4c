import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * The AWS shell's SDK clients are X-Ray traced in Lambda. Outside it (the AWS shell's tests, the
 * emulated API Gateway) nothing is traced, and the X-Ray SDK is not loaded at all: loading it turns
 * on async hooks that track every promise of the process (each SDK call cost ~30% more CPU).
 * Each case runs in a process of its own, since the SDK decides when it is imported.
 */
const PROBE = `
  const { tracer } = await import('./functions/adapters/aws/powertools.ts');
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const client = tracer.captureAWSv3Client(new DynamoDBClient({ region: 'us-east-1' }));
  console.log(JSON.stringify({
    clsNamespaces: Object.keys(process.namespaces ?? {}),
    xrayMiddleware: client.middlewareStack.identify().filter((name) => /xray/i.test(name)).length,
  }));
`;

function probe(env: Record<string, string>): { clsNamespaces: string[]; xrayMiddleware: number } {
  const { AWS_LAMBDA_FUNCTION_NAME: _, ...inherited } = process.env;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROBE], {
    cwd: new URL('../..', import.meta.url),
    env: { ...inherited, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

describe('X-Ray tracing of the SDK clients', () => {
  it('outside Lambda: clients untouched and no promise-tracking hooks in the process', () => {
    expect(probe({})).toEqual({ clsNamespaces: [], xrayMiddleware: 0 });
  });

  it('in Lambda: each client call is a traced subsegment', () => {
    const traced = probe({ AWS_LAMBDA_FUNCTION_NAME: 'svc-api', AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' });
    expect(traced.xrayMiddleware).toBe(1);
    expect(traced.clsNamespaces).toContain('AWSXRay');
  });
});
