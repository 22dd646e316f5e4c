import { Duration, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Construct } from 'constructs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { removalPolicyFor, type SvcConfig } from '../config.js';
import type { Data } from './data.js';
import type { Secrets } from './secrets.js';

/** The repository root: entries, the lock file and the Python asset are found from here, not the cwd. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export const repoPath = (relative: string): string => join(REPO_ROOT, relative);

/** The runtime the design pins (docs/architecture.md "Pins that matter"); Graviton is cheaper per GB-second. */
export const NODE_RUNTIME = lambda.Runtime.NODEJS_22_X;
export const ARCHITECTURE = lambda.Architecture.ARM_64;

/**
 * One log group per function, created here rather than by Lambda on first write, so its retention
 * and removal follow the stage instead of "never expire" and "left behind".
 */
export function functionLogGroup(scope: Construct, id: string, config: SvcConfig): logs.LogGroup {
  return new logs.LogGroup(scope, id, {
    retention: config.logRetentionDays,
    removalPolicy: removalPolicyFor(config.stage),
  });
}

/**
 * A role for a service function (api, worker) that may write its own logs and nothing else yet;
 * callers add exactly the grants the function needs. Not AWSLambdaBasicExecutionRole: that
 * managed policy lets the function write to every log group in the account.
 */
export function serviceRole(scope: Construct, id: string, logGroup: logs.ILogGroup, description: string): iam.Role {
  const role = new iam.Role(scope, id, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description });
  logGroup.grantWrite(role);
  return role;
}

export interface NodeFunctionProps {
  /** Handler file relative to the repository root; it exports `handler`. */
  readonly entry: string;
  readonly role: iam.IRole;
  readonly logGroup: logs.ILogGroup;
  readonly timeout: Duration;
  readonly memorySize?: number;
  readonly environment?: Record<string, string>;
  readonly description: string;
  /** Extra bundling settings for one function (the sandbox ships files beside its bundle). */
  readonly bundling?: Partial<BundlingOptions>;
  readonly ephemeralStorageSize?: lambda.FunctionProps['ephemeralStorageSize'];
  /** Lambda tenant isolation (the sandboxes): an execution environment serves one tenant only. */
  readonly tenancyConfig?: lambda.TenancyConfig;
  /** Unset: the function draws on the account's unreserved pool (lib/config.ts says when to set it). */
  readonly reservedConcurrentExecutions?: number;
  /** X-Ray: active for the service functions (their SDK calls are traced by Powertools); the sandbox opts out. */
  readonly tracing?: lambda.Tracing;
  /** The sandboxes' VPC (sandbox-network.ts); the service functions run outside any VPC. */
  readonly vpc?: lambda.FunctionProps['vpc'];
  readonly vpcSubnets?: lambda.FunctionProps['vpcSubnets'];
  readonly securityGroups?: lambda.FunctionProps['securityGroups'];
}

/**
 * A Node function bundled by the esbuild in node_modules: `cdk synth` needs neither Docker nor
 * network. ESM so `import.meta.url` keeps working (the runtime finds its shims relative to it);
 * the banner gives CommonJS dependencies the `require`, `__filename` and `__dirname` they expect
 * inside an ES module (the TypeScript compiler, which schema inference bundles, reads `__filename`
 * as it loads: without it the api and worker failed at cold start).
 */
export function nodeFunction(scope: Construct, id: string, props: NodeFunctionProps): NodejsFunction {
  const sourceMap = props.bundling?.sourceMap ?? true;
  // Node maps stack traces back to the TypeScript only when asked to; CDK no longer sets this.
  const environment = sourceMap ? { NODE_OPTIONS: '--enable-source-maps', ...props.environment } : props.environment;
  const tracing = props.tracing ?? lambda.Tracing.ACTIVE;
  if (tracing === lambda.Tracing.ACTIVE) {
    Validations.of(props.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Added by CDK for active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions.',
    });
  }
  return new NodejsFunction(scope, id, {
    tracing,
    entry: repoPath(props.entry),
    handler: 'handler',
    projectRoot: REPO_ROOT,
    depsLockFilePath: repoPath('package-lock.json'),
    runtime: NODE_RUNTIME,
    architecture: ARCHITECTURE,
    role: props.role,
    logGroup: props.logGroup,
    loggingFormat: lambda.LoggingFormat.JSON,
    timeout: props.timeout,
    memorySize: props.memorySize ?? 1024,
    ephemeralStorageSize: props.ephemeralStorageSize,
    tenancyConfig: props.tenancyConfig,
    reservedConcurrentExecutions: props.reservedConcurrentExecutions,
    vpc: props.vpc,
    vpcSubnets: props.vpcSubnets,
    securityGroups: props.securityGroups,
    environment,
    description: props.description,
    bundling: {
      forceDockerBundling: false,
      format: OutputFormat.ESM,
      target: 'node22',
      minify: true,
      sourceMap,
      sourcesContent: false,
      mainFields: ['module', 'main'],
      banner: [
        "import { createRequire as __svcCreateRequire } from 'node:module';",
        "import { fileURLToPath as __svcFileURLToPath } from 'node:url';",
        'const require = __svcCreateRequire(import.meta.url);',
        'const __filename = __svcFileURLToPath(import.meta.url);',
        "const __dirname = __svcFileURLToPath(new URL('.', import.meta.url));",
      ].join(' '),
      // Bundle the AWS SDK instead of using the runtime's copy: the deployed code then runs the
      // exact SDK versions package.json pins and the aws test tier exercised.
      externalModules: [],
      ...props.bundling,
    },
  });
}

/**
 * What the shared AWS config (functions/adapters/aws/aws-config.ts) reads in every service
 * function: the table, the bucket, the jobs queue, the signing key secret and the secret variables
 * key. Naming them grants nothing; each function gets its own grants.
 */
export function serviceEnvironment(data: Data, secrets: Secrets, jobsQueue: sqs.IQueue): Record<string, string> {
  return {
    TABLE_NAME: data.table.tableName,
    BUCKET_NAME: data.bucket.bucketName,
    // Go scripts are built off the service for the sandbox's architecture (README: Go scripts on AWS).
    SANDBOX_ARCH: ARCHITECTURE === lambda.Architecture.ARM_64 ? 'arm64' : 'x86_64',
    JOBS_QUEUE_URL: jobsQueue.queueUrl,
    SIGNING_KEY_SECRET_ARN: secrets.signingKey.secretArn,
    SECRETS_KMS_KEY_ID: secrets.secretVariablesKey.keyArn,
  };
}
