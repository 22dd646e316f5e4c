import { copyFileSync, cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duration, Size, Stack, Validations } from 'aws-cdk-lib';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { buildSync } from 'esbuild';
import { LAMBDA_MAX_SECONDS, type SvcConfig } from '../config.js';
import type { Data } from './data.js';
import { ARCHITECTURE, functionLogGroup, repoPath, serviceRole } from './lambda-defaults.js';
import { acknowledgeWildcardResource } from './nag.js';

/** npm and pip are heavy; a tree and its archive must fit in /tmp. */
const BUILDER_MEMORY_MB = 2048;
const BUILDER_EPHEMERAL_STORAGE = Size.gibibytes(4);

/**
 * The dependency builder (docs/dependencies-aws.md): resolves scripts' imports into locks for the
 * api (awaited at create) and builds each lock's tree off the run path (an Event invocation by the
 * api), storing it in the bucket under `deps/`. A container image: Lambda's Node.js 22 image with
 * Python 3.12 and pip added, so one function installs for both sandboxes, on their architecture.
 * Its role may write objects under `deps/` and nothing else of the service's (and read the private
 * npm registry's token secret, when one is configured); package install scripts never run (npm --ignore-scripts, wheels only), so no package code runs beside it.
 */
export class DependencyBuilder extends Construct {
  readonly handler: lambda.DockerImageFunction;
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: { config: SvcConfig; data: Data }) {
    super(scope, id);
    const { config, data } = props;
    const logGroup = functionLogGroup(this, 'Logs', config);
    this.role = serviceRole(this, 'Role', logGroup, 'svc dependency builder: resolves and installs scripts\' packages into the bucket');
    this.handler = new lambda.DockerImageFunction(this, 'Function', {
      description: "svc dependency builder: resolves scripts' npm and PyPI imports and builds their trees into S3",
      code: builderImage(this),
      architecture: ARCHITECTURE,
      role: this.role,
      logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      tracing: lambda.Tracing.ACTIVE,
      timeout: Duration.seconds(LAMBDA_MAX_SECONDS),
      memorySize: BUILDER_MEMORY_MB,
      ephemeralStorageSize: BUILDER_EPHEMERAL_STORAGE,
      // A build is started by an Event invocation: Lambda retries a failed one twice; a package
      // the registry does not have is not a failure (the error is stored for the runs to read).
      retryAttempts: 2,
      environment: {
        BUCKET_NAME: data.bucket.bucketName,
        NPM_CONFIG_REGISTRY: config.npmRegistry,
        PIP_INDEX_URL: config.pipIndexUrl,
        DEPS_BUILD_DIR: '/tmp/svc-deps-build',
        // The secret's ARN, never its value: the builder reads the token at cold start.
        ...(config.npmTokenSecretArn ? { NPM_TOKEN_SECRET_ARN: config.npmTokenSecretArn } : {}),
      },
    });
    // A private registry's token: readable by this role alone (not the api, worker or sandboxes).
    if (config.npmTokenSecretArn) secretsmanager.Secret.fromSecretCompleteArn(this, 'NpmToken', config.npmTokenSecretArn).grantRead(this.role);
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'DependencyTrees', actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'], resources: [data.bucket.arnForObjects('deps/*')] }),
    );
    // HeadObject on a missing key answers 404 (not 403) only with ListBucket.
    this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [data.bucket.bucketArn], conditions: { StringLike: { 's3:prefix': ['deps/*'] } } }));
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Added by CDK for active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions.',
    });
    acknowledgeWildcardResource(this.role, data.bucket, '/deps/*', 'A tree is named by its lock\'s hash at run time; the wildcard spans the deps/ prefix of this one bucket.');
  }

  /** The api resolves through it (awaited) and starts builds (Event invocations). */
  grantInvoke(grantee: iam.IGrantable): void {
    // The unqualified ARN only, as the sandboxes' grant: no version or alias is ever invoked.
    iam.Grant.addToPrincipal({ grantee, actions: ['lambda:InvokeFunction'], resourceArns: [this.handler.functionArn] });
  }

  /** What the api reads: the builder's name and the registries a lock may name. */
  environment(config: SvcConfig): Record<string, string> {
    return { DEPS_BUILDER_FUNCTION: this.handler.functionName, NPM_CONFIG_REGISTRY: config.npmRegistry, PIP_INDEX_URL: config.pipIndexUrl };
  }
}

/**
 * The image's build context, made at synth: the Dockerfile and the handler bundled by the esbuild
 * in node_modules (no Docker for the bundle). Where the stack is synthesized without bundling
 * (fast tests), the bundle is a placeholder.
 */
function builderImage(scope: Construct): lambda.DockerImageCode {
  const dir = mkdtempSync(join(tmpdir(), 'svc-deps-builder-'));
  copyFileSync(repoPath('lib/docker/dependency-builder/Dockerfile'), join(dir, 'Dockerfile'));
  if (Stack.of(scope).bundlingRequired) {
    buildSync({
      entryPoints: [repoPath('functions/handlers/dependency-builder.ts')],
      outfile: join(dir, 'index.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      minify: true,
      banner: {
        js: [
          "import { createRequire as __svcCreateRequire } from 'node:module';",
          "import { fileURLToPath as __svcFileURLToPath } from 'node:url';",
          'const require = __svcCreateRequire(import.meta.url);',
          'const __filename = __svcFileURLToPath(import.meta.url);',
          "const __dirname = __svcFileURLToPath(new URL('.', import.meta.url));",
        ].join(' '),
      },
      logLevel: 'error',
    });
    // The runner's shims are found beside the bundle, as in the Node sandbox.
    cpSync(repoPath('functions/runtime/shims'), join(dir, 'shims'), { recursive: true });
  } else {
    writeFileSync(join(dir, 'index.mjs'), '// not bundled: this synth skipped bundling\n');
  }
  return lambda.DockerImageCode.fromImageAsset(dir, { platform: ARCHITECTURE === lambda.Architecture.ARM_64 ? Platform.LINUX_ARM64 : Platform.LINUX_AMD64 });
}
