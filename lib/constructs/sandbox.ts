import * as cdk from 'aws-cdk-lib';
import { DockerImage, Duration, Size, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { LAMBDA_MAX_SECONDS, type SvcConfig } from '../config.js';
import { ARCHITECTURE, functionLogGroup, nodeFunction, repoPath } from './lambda-defaults.js';
import { NODE_RUNTIME_PIN_REASON } from './nag.js';
import { SandboxNetwork } from './sandbox-network.js';
import { layOutPythonSandbox, PYTHON_HANDLER_DIR } from './python-sandbox-files.js';

/** Room for the scripts a job writes to /tmp and for the warm interpreters the runner keeps. */
const SANDBOX_MEMORY_MB = 1024;
const SANDBOX_EPHEMERAL_STORAGE = Size.mebibytes(1024);
/** The client libraries scripts import with no install step, as the repository keeps them. */
const TS_CLIENT = 'clients/ts/svc-client';
const WINDMILL_CLIENT = 'clients/ts/windmill-client';

/**
 * The functions that run user code: Node (TypeScript, Bash) and Python. Only the worker, the api
 * (the jobs of sync webhooks and SSE streams) and the flow runner (expressions) invoke them.
 *
 * Their roles have NO permissions usable from inside — no managed policies, not even CloudWatch
 * Logs; the one inline policy lets Lambda place them in their VPC and denies every action to any
 * call made from an execution environment (sandbox-network.ts). Lambda hands a function its role's credentials through the environment, where
 * user code can read them; any permission here would be a permission of every script ever run.
 * The price is that the sandboxes write no CloudWatch logs: they stream a job's output back to the
 * worker (see functions/adapters/aws/sandbox-protocol.ts), which stores it as the job's log, and the
 * worker logs failed invocations (errors, timeouts) under its own role. To debug a sandbox itself,
 * grant its role its own log group's CreateLogStream/PutLogEvents for the time being.
 *
 * Their log groups exist anyway so that such a temporary grant writes with the stage's retention.
 *
 * Both run in Lambda tenant isolation mode: their invokers name a tenant per workspace and run-as user
 * on every invoke (lambda-sandbox-runner.ts), and Lambda never lets an execution environment — its
 * /tmp, its memory, its warm interpreters — serve a second tenant. Lambda offers no user or PID
 * namespaces inside an environment, so this is what keeps two users' code apart there.
 */
export class Sandboxes extends Construct {
  readonly nodeSandbox: lambda.Function;
  readonly pythonSandbox: lambda.Function;
  readonly nodeSandboxRole: iam.Role;
  readonly pythonSandboxRole: iam.Role;
  /** Their VPC and its egress rule (sandbox-network.ts). */
  readonly network: SandboxNetwork;

  constructor(scope: Construct, id: string, config: SvcConfig) {
    super(scope, id);
    const timeout = Duration.seconds(LAMBDA_MAX_SECONDS);

    this.network = new SandboxNetwork(this, 'Network', config);
    this.nodeSandboxRole = noPermissionRole(this, 'NodeRole', 'svc Node sandbox: runs user code, so it holds no permissions');
    this.nodeSandbox = nodeFunction(this, 'Node', {
      entry: 'functions/handlers/sandbox.ts',
      description: 'svc sandbox: runs user TypeScript and Bash jobs for the worker',
      role: this.nodeSandboxRole,
      ...this.network.functionProps(),
      logGroup: functionLogGroup(this, 'NodeLogs', config),
      timeout,
      memorySize: SANDBOX_MEMORY_MB,
      ephemeralStorageSize: SANDBOX_EPHEMERAL_STORAGE,
      tenancyConfig: lambda.TenancyConfig.PER_TENANT,
      reservedConcurrentExecutions: config.sandboxReservedConcurrency,
      // Active tracing would need X-Ray grants, and this role holds none: the worker's traced
      // Invoke call shows each sandbox run in the job's trace.
      tracing: lambda.Tracing.DISABLED,
      bundling: {
        // No source maps: they would need NODE_OPTIONS, and this function's environment is meant to
        // hold nothing of ours.
        sourceMap: false,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          // The runner resolves its language shims next to itself (new URL('./shims/...',
          // import.meta.url)); in the bundle "itself" is index.mjs at the asset root. The
          // svc-client library scripts import goes under its repository path beside it (see
          // functions/runtime/client-libraries.ts).
          afterBundling: (inputDir, outputDir) => [
            `mkdir -p "${outputDir}/shims" "${outputDir}/${TS_CLIENT}"`,
            `cp -R "${inputDir}/functions/runtime/shims/." "${outputDir}/shims/"`,
            `cp -R "${inputDir}/${TS_CLIENT}/." "${outputDir}/${TS_CLIENT}/"`,
            // Windmill's TypeScript client as pinned in package.json, for code that imports it without a lock.
            `mkdir -p "${outputDir}/${WINDMILL_CLIENT}"`,
            `cp -R "${inputDir}/node_modules/windmill-client/package.json" "${inputDir}/node_modules/windmill-client/dist" "${outputDir}/${WINDMILL_CLIENT}/"`,
          ],
        },
      },
    });

    this.pythonSandboxRole = noPermissionRole(this, 'PythonRole', 'svc Python sandbox: runs user code, so it holds no permissions');
    this.pythonSandbox = new lambda.Function(this, 'Python', {
      description: 'svc sandbox: runs user Python jobs for the worker',
      runtime: lambda.Runtime.PYTHON_3_12,
      architecture: ARCHITECTURE,
      handler: 'handler.handler',
      code: pythonSandboxCode(),
      role: this.pythonSandboxRole,
      ...this.network.functionProps(),
      logGroup: functionLogGroup(this, 'PythonLogs', config),
      loggingFormat: lambda.LoggingFormat.JSON,
      timeout,
      memorySize: SANDBOX_MEMORY_MB,
      ephemeralStorageSize: SANDBOX_EPHEMERAL_STORAGE,
      tenancyConfig: lambda.TenancyConfig.PER_TENANT,
      reservedConcurrentExecutions: config.sandboxReservedConcurrency,
    });

    Validations.of(this.nodeSandbox).acknowledge({ id: 'AwsSolutions-L1', reason: NODE_RUNTIME_PIN_REASON });
    Validations.of(this.pythonSandbox).acknowledge({
      id: 'AwsSolutions-L1',
      reason: 'python3.12 is the runtime the design asks for; user scripts are written against one Python version, so moving to a newer one is a deliberate, announced change.',
    });
  }
}

/** A role Lambda can assume that grants nothing: no managed and no inline policies. */
function noPermissionRole(scope: Construct, id: string, description: string): iam.Role {
  const role = new iam.Role(scope, id, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), description });
  SandboxNetwork.grantNetworkInterfaces(role);
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: 'Lambda needs the EC2 network-interface actions on any resource to place the function in its VPC (DescribeNetworkInterfaces takes no resource ARN); every call from inside the execution environment is denied by the same policy.',
  });
  return role;
}

/**
 * The Python sandbox laid out by layOutPythonSandbox (python-sandbox-files.ts). Bundled on this
 * machine (a copy, no Docker); the image is only CDK's required fallback.
 */
function pythonSandboxCode(): lambda.Code {
  return lambda.Code.fromAsset(PYTHON_HANDLER_DIR, {
    assetHashType: cdk.AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('public.ecr.aws/sam/build-python3.12'),
      local: {
        tryBundle(outputDir: string) {
          layOutPythonSandbox(outputDir);
          return true;
        },
      },
    },
  });
}
