import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableDefinition, TTL_ATTRIBUTE } from '../../functions/adapters/aws/dynamo-keys.js';
import { MAX_RECEIVE_COUNT } from '../../lib/constructs/job-queue.js';
import { EVENTS_STREAM_FILTERS } from '../../lib/constructs/events-filter.js';
import { BINARY_MEDIA_TYPES } from '../aws/api-gateway-proxy.js';
import { flowRunnerDefinition } from '../../statemachines/flow-runner.js';
import type { SvcStack } from '../../lib/svc-stack.js';
import { arnOf, buildSvcApp, logicalId } from './svc-app.js';
import { prebuiltGoBinary } from '../../functions/runtime/go-prebuilt.js';
import { CONSOLE_BUNDLES } from '../../functions/http/console/static-assets.js';

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string };

// One bundled synth for the whole file: esbuild runs for the three Node functions.
let stack: SvcStack;
let template: Template;
let assemblyDir: string;

// esbuild bundles every Node function here: over a minute when the machine is shared.
beforeAll(() => {
  const built = buildSvcApp({ bundle: true });
  stack = built.stack;
  template = Template.fromStack(stack);
  assemblyDir = built.app.synth().directory;
}, 300_000);

interface BundledSandbox {
  setSandboxWorkDir(dir: string): void;
  closeSandbox(): Promise<void>;
  runSandboxed(payload: unknown, write: (event: { type: string; outcome?: unknown }) => void, signal: AbortSignal, remainingMs?: number): Promise<void>;
}

/** A function's asset directory in the cloud assembly (its S3 key is the asset hash). */
const assetOf = (fn: Parameters<typeof logicalId>[0]): string => {
  const s3Key: string = propsOf(fn).Code.S3Key;
  return join(assemblyDir, `asset.${s3Key.replace(/\.zip$/, '')}`);
};
const nodeSandboxAsset = (): string => assetOf(stack.sandboxes.nodeSandbox);

const propsOf = (construct: Parameters<typeof logicalId>[0]): Record<string, any> =>
  (template.toJSON().Resources[logicalId(construct)] as Resource).Properties;

describe('DynamoDB table', () => {
  it('has the key schema and indexes of tableDefinition()', () => {
    const definition = tableDefinition('unused');
    const table = propsOf(stack.data.table);
    expect(table.KeySchema).toEqual(definition.KeySchema);
    expect(table.AttributeDefinitions).toEqual(expect.arrayContaining(definition.AttributeDefinitions ?? []));
    expect(table.AttributeDefinitions).toHaveLength(definition.AttributeDefinitions?.length ?? 0);
    expect(table.GlobalSecondaryIndexes).toEqual(definition.GlobalSecondaryIndexes);
    expect(table.BillingMode).toBe('PAY_PER_REQUEST');
  });

  it("has the sparse index of a workspace's running flows, beside the job list and status indexes", () => {
    const indexes = propsOf(stack.data.table).GlobalSecondaryIndexes as Array<{ IndexName: string; KeySchema: unknown; Projection: unknown }>;
    expect(indexes.map((i) => i.IndexName)).toEqual(['gsi1', 'gsi2', 'gsi3', 'gsi4']);
    expect(indexes[2]).toEqual({
      IndexName: 'gsi3',
      KeySchema: [
        { AttributeName: 'gsi3pk', KeyType: 'HASH' },
        { AttributeName: 'gsi3sk', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['script_path'] },
    });
    // A workspace's queued jobs, counted before a new run is admitted (docs/security.md, "Runaway jobs").
    expect(indexes[3]).toEqual({
      IndexName: 'gsi4',
      KeySchema: [
        { AttributeName: 'gsi1pk', KeyType: 'HASH' },
        { AttributeName: 'gsi4sk', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'KEYS_ONLY' },
    });
  });

  it('keeps point-in-time recovery, TTL, a stream with both images, and encryption', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
      SSESpecification: { SSEEnabled: true },
    });
  });

  it('is deleted with a dev stack', () => {
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
  });
});

describe('S3 bucket', () => {
  it('blocks public access, encrypts, keeps no versions and logs access to the log bucket', () => {
    const bucket = propsOf(stack.data.bucket);
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
    expect(bucket.VersioningConfiguration).toBeUndefined();
    expect(bucket.LoggingConfiguration.DestinationBucketName).toEqual({ Ref: expect.stringMatching(/AccessLogs/) });
  });

  it('aborts incomplete multipart uploads, and expires only the sandbox payloads of a run (uploads are kept, as locally)', () => {
    const rules = propsOf(stack.data.bucket).LifecycleConfiguration.Rules;
    expect(rules).toEqual([
      expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
      { Id: 'expire-sandbox-payloads', Prefix: '_sandbox/', ExpirationInDays: 1, Status: 'Enabled' },
    ]);
    expect(rules.filter((r: { ExpirationInDays?: number }) => r.ExpirationInDays !== undefined).map((r: { Prefix?: string }) => r.Prefix)).toEqual(['_sandbox/']);
  });

  it('refuses requests without TLS', () => {
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logicalId(stack.data.bucket) },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });
});

describe('jobs queue', () => {
  it('parks a job in the DLQ after five deliveries (a throttled receive counts as one: AWS advises at least 5)', () => {
    expect(MAX_RECEIVE_COUNT).toBe(5);
    expect(propsOf(stack.jobQueue.queue).RedrivePolicy).toEqual({
      deadLetterTargetArn: arnOf(stack.jobQueue.deadLetterQueue),
      maxReceiveCount: 5,
    });
  });

  it('encrypts both queues and holds a message longer than the worker may run', () => {
    const queue = propsOf(stack.jobQueue.queue);
    expect(queue.SqsManagedSseEnabled).toBe(true);
    expect(propsOf(stack.jobQueue.deadLetterQueue).SqsManagedSseEnabled).toBe(true);
    expect(queue.VisibilityTimeout).toBeGreaterThan(propsOf(stack.worker.handler).Timeout);
  });

  it('alarms through an encrypted topic when the DLQ holds a message', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack.jobQueue.deadLetterQueue), 'QueueName'] } }],
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: [{ Ref: logicalId(stack.alarms.topic) }],
    });
    expect(propsOf(stack.alarms.topic).KmsMasterKeyId).toBeDefined();
  });
});

describe('functions', () => {
  it('are ten Node 22 functions (the schedule tick function is the tenth), one Python 3.12 function and the dependency builder image, all on ARM with JSON logs', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function')) as Resource[];
    expect(functions.map((f) => f.Properties.Runtime ?? f.Properties.PackageType).sort()).toEqual(['Image', ...Array(10).fill('nodejs22.x'), 'python3.12']);
    for (const f of functions) {
      expect(f.Properties.Architectures).toEqual(['arm64']);
      expect(f.Properties.LoggingConfig).toMatchObject({ LogFormat: 'JSON', LogGroup: { Ref: expect.any(String) } });
    }
    const retentions = Object.values(template.findResources('AWS::Logs::LogGroup')).map((g: any) => g.Properties.RetentionInDays);
    expect(new Set(retentions)).toEqual(new Set([30]));
  });

  it('give the api and the worker the settings the handlers read', () => {
    const apiEnv = propsOf(stack.api.handler).Environment.Variables;
    expect(Object.keys(apiEnv)).toEqual(
      expect.arrayContaining(['TABLE_NAME', 'BUCKET_NAME', 'JOBS_QUEUE_URL', 'SIGNING_KEY_SECRET_ARN', 'ADMIN_TOKEN_SECRET_ARN', 'SYNC_MAX_WAIT_SECONDS', 'JOB_TIMEOUT_SECONDS']),
    );
    expect(apiEnv).toMatchObject({ SYNC_MAX_WAIT_SECONDS: '60', JOB_TIMEOUT_SECONDS: '840', SECRETS_KMS_KEY_ID: arnOf(stack.secrets.secretVariablesKey) });
    const workerEnv = propsOf(stack.worker.handler).Environment.Variables;
    expect(workerEnv).toMatchObject({
      SANDBOX_NODE_FUNCTION: arnOf(stack.sandboxes.nodeSandbox),
      SANDBOX_PYTHON_FUNCTION: arnOf(stack.sandboxes.pythonSandbox),
      JOB_TIMEOUT_SECONDS: '840',
      MAX_OUTPUT_BYTES: expect.any(String),
      SECRETS_KMS_KEY_ID: arnOf(stack.secrets.secretVariablesKey),
    });
    expect(Object.keys(workerEnv)).toEqual(expect.arrayContaining(['TABLE_NAME', 'BUCKET_NAME', 'SIGNING_KEY_SECRET_ARN', 'API_BASE_URL']));
    expect(workerEnv.ADMIN_TOKEN_SECRET_ARN).toBeUndefined();
  });

  it("tell the api (which announces it), the worker and the flow runner the sandbox's architecture, for Go binaries", () => {
    const sandboxArch = propsOf(stack.sandboxes.nodeSandbox).Architectures[0];
    expect(sandboxArch).toBe('arm64');
    for (const fn of [stack.api.handler, stack.worker.handler, stack.flowRunner.handler]) {
      expect(propsOf(fn).Environment.Variables.SANDBOX_ARCH).toBe(sandboxArch);
    }
  });

  it('run the worker from the queue with partial batch failures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf(stack.jobQueue.queue),
      FunctionName: { Ref: logicalId(stack.worker.handler) },
      BatchSize: 5,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('ship the Node sandbox with its language shims and the svc-client library beside the bundle', () => {
    const assetDir = nodeSandboxAsset();
    expect(existsSync(join(assetDir, 'index.mjs'))).toBe(true);
    expect(existsSync(join(assetDir, 'shims', 'node-shim.mjs'))).toBe(true);
    for (const file of ['package.json', 'index.mjs', 'index.d.ts']) {
      const client = `clients/ts/svc-client/${file}`;
      expect(readFileSync(join(assetDir, client), 'utf8')).toBe(readFileSync(client, 'utf8'));
    }
    // Windmill's client as pinned in package.json, for code that imports it without a lock.
    for (const file of ['package.json', 'dist/index.mjs', 'dist/client.mjs']) {
      expect(readFileSync(join(assetDir, 'clients/ts/windmill-client', file), 'utf8')).toBe(readFileSync(`node_modules/windmill-client/${file}`, 'utf8'));
    }
  });

  it('ship the api with the console chart library and editor bundles beside its bundle, which has no node_modules', () => {
    const assetDir = assetOf(stack.api.handler);
    expect(existsSync(join(assetDir, 'node_modules'))).toBe(false);
    for (const [bundled, installed] of [['uplot.iife.min.js', 'uPlot.iife.min.js'], ['uplot.min.css', 'uPlot.min.css']]) {
      expect(readFileSync(join(assetDir, 'console-assets', bundled), 'utf8')).toBe(readFileSync(`node_modules/uplot/dist/${installed}`, 'utf8'));
    }
    // Every bundle the console serves (the editors, the runs, item, run and script editor pages' scripts), as the local build makes them.
    for (const bundle of CONSOLE_BUNDLES.map((name) => `${name}.js`)) {
      expect(readFileSync(join(assetDir, 'console-assets', bundle), 'utf8')).toBe(readFileSync(`dist/console-assets/${bundle}`, 'utf8'));
    }
  });

  it('ship the Python sandbox with the local runner\'s shim beside its handler, and it runs a job', () => {
    const assetDir = assetOf(stack.sandboxes.pythonSandbox);
    expect(readFileSync(join(assetDir, 'python_shim.py'), 'utf8')).toBe(readFileSync('functions/runtime/shims/python_shim.py', 'utf8'));
    const event = {
      jobId: 'job-py', workspaceId: 'ws', language: 'python3', scriptHash: 'h-py', env: {}, args: { n: 20 },
      content: 'def main(n: int):\n    return n + 1\n', schema: { type: 'object', properties: { n: {} }, required: ['n'] },
      timeoutMs: 10_000, maxOutputBytes: 100_000,
    };
    // The handler as Lambda's Python runtime would call it, from the bundled directory alone.
    const script = 'import json, sys; from handler import handler; print(json.dumps(handler(json.load(sys.stdin), None)))';
    const out = execFileSync('python3', ['-c', script], { cwd: assetDir, input: JSON.stringify(event), encoding: 'utf8' });
    expect(JSON.parse(out).events.at(-1)).toEqual({ type: 'outcome', outcome: { ok: true, result: 21, streamed: false } });
  });

  it('ship the Python sandbox with the svc client package, and a job imports it', () => {
    const assetDir = assetOf(stack.sandboxes.pythonSandbox);
    expect(readFileSync(join(assetDir, 'svc', '__init__.py'), 'utf8')).toBe(readFileSync('clients/python/svc/__init__.py', 'utf8'));
    const event = {
      jobId: 'job-py', workspaceId: 'ws', language: 'python3', scriptHash: 'h-py-client', env: { OV_WORKSPACE: 'ws', OV_JOB_ID: 'job-py' },
      args: {}, content: 'import svc\ndef main():\n    return svc.get_context()\n', schema: { type: 'object', properties: {}, required: [] },
      timeoutMs: 10_000, maxOutputBytes: 100_000,
    };
    // Run from a directory outside the checkout, so only the bundled copy can be found.
    const script = `import json, sys; sys.path.insert(0, ${JSON.stringify(assetDir)}); from handler import handler; print(json.dumps(handler(json.load(sys.stdin), None)))`;
    const out = execFileSync('python3', ['-B', '-c', script], { cwd: tmpdir(), input: JSON.stringify(event), encoding: 'utf8' });
    expect(JSON.parse(out).events.at(-1)).toMatchObject({ outcome: { ok: true, result: { workspace: 'ws', job_id: 'job-py', flow_path: null } } });
  });
});

describe('the service functions\' bundles', () => {
  // Loaded in a fresh Node as the Lambda runtime loads them: an ES module, with the awslambda global.
  const LOAD = "globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } }; await import(process.argv[1]);";

  it('load as ES modules, CommonJS dependencies included (the TypeScript compiler reads __filename)', () => {
    const functions = { api: stack.api.handler, worker: stack.worker.handler, flowRunner: stack.flowRunner.handler, reaper: stack.jobDelivery.reaper, dispatcher: stack.jobDelivery.dispatcher };
    for (const [name, fn] of Object.entries(functions)) {
      const entry = pathToFileURL(join(assetOf(fn), 'index.mjs')).href;
      expect(() => execFileSync(process.execPath, ['--input-type=module', '-e', LOAD, entry], { cwd: tmpdir(), env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1' }, stdio: 'pipe' }), name).not.toThrow();
    }
  });
});

describe('the bundled Node sandbox, run as Lambda would load it', () => {
  let sandbox: BundledSandbox;
  let workDir: string;

  beforeAll(async () => {
    sandbox = (await import(pathToFileURL(join(nodeSandboxAsset(), 'index.mjs')).href)) as BundledSandbox;
    workDir = mkdtempSync(join(tmpdir(), 'svc-cdk-sandbox-'));
    sandbox.setSandboxWorkDir(workDir);
  });
  afterAll(async () => {
    await sandbox?.closeSandbox();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  const outcomeOf = async (language: string, content: string, env: Record<string, string> = {}, extra: Record<string, unknown> = {}) => {
    const events: Array<{ type: string; outcome?: unknown }> = [];
    const request = { jobId: 'job-1', workspaceId: 'ws', language, scriptHash: `h-${language}-${content.length}`, content, args: {}, env, ...extra };
    const schema = { type: 'object', properties: {}, required: [] };
    await sandbox.runSandboxed({ ...request, schema, timeoutMs: 10_000, maxOutputBytes: 100_000 }, (e) => events.push(e), new AbortController().signal, 60_000);
    return events.at(-1)?.outcome;
  };

  it('runs a Bash job', async () => {
    expect(await outcomeOf('bash', 'echo hi')).toMatchObject({ ok: true, result: 'hi' });
  });

  // The bundle carries no native binary: TypeScript is transpiled by the typescript package itself.
  it('runs a TypeScript job', async () => {
    expect(await outcomeOf('nativets', 'export function main(): number { return 42; }')).toMatchObject({ ok: true, result: 42 });
  });

  // Go binaries are built by the CLI and fetched by URL (the sandbox holds no credentials).
  it('runs a Go job whose binary it fetches from the URL the worker sends, and refuses one without', async () => {
    const content = 'package inner\n\nfunc main() (string, error) {\n\treturn "go on lambda", nil\n}\n';
    const upload = await prebuiltGoBinary(content, { goos: 'linux', goarch: process.arch === 'arm64' ? 'arm64' : 'amd64' });
    const binary = gunzipSync(Buffer.from(upload.gzip_base64, 'base64'));
    expect(await outcomeOf('go', content)).toMatchObject({ ok: false, error: { name: 'SandboxError', message: 'this Go job came without the URL of its binary' } });
    const server = createServer((_req, res) => res.end(binary)).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/binary`;
      expect(await outcomeOf('go', content, {}, { goBinaryUrl: url })).toMatchObject({ ok: true, result: 'go on lambda' });
    } finally {
      server.close();
    }
  }, 120_000);

  // Deno is a 95 MB binary the bundle does not carry: deno jobs are refused, never run on Node.
  it('refuses a deno job, saying Deno is not installed', async () => {
    expect(await outcomeOf('deno', 'export function main() { return 1; }')).toMatchObject({
      ok: false,
      error: { name: 'ExecutionErr', message: expect.stringMatching(/^Deno is not installed on this runner/) },
    });
  });

  it('runs a TypeScript job that imports svc-client', async () => {
    const content = "import * as svc from 'svc-client';\nexport function main() { return svc.getContext(); }";
    expect(await outcomeOf('nativets', content, { OV_WORKSPACE: 'ws', OV_JOB_ID: 'job-1' })).toMatchObject({
      ok: true,
      result: { workspace: 'ws', jobId: 'job-1', flowPath: null },
    });
  });

  it('runs a TypeScript job that imports windmill-client without a lock (an inline flow step)', async () => {
    const content = "import wmill from 'windmill-client';\nexport function main() { return [wmill.getWorkspace(), wmill.getStatePath()]; }";
    const outcome = await outcomeOf('nativets', content, { WM_WORKSPACE: 'ws', WM_STATE_PATH: 'f/a/b/user' });
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, result: ['ws', 'f/a/b/user'] });
  });
});

describe('flow-runner state machine', () => {
  const machine = () => propsOf(stack.flowRunner.stateMachine);

  it('is one Standard state machine, named for the stage, logging every transition without data, traced', () => {
    expect(machine()).toMatchObject({
      StateMachineName: 'svc-dev-flow-runner',
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
    });
  });

  it('runs the definition of statemachines/flow-runner.ts with the flow-runner function and the jobs queue', () => {
    // The deployed definition with its two references put back as markers, against the builder's.
    const parts: unknown[] = machine().DefinitionString['Fn::Join'][1];
    const json = parts
      .map((part) => {
        if (typeof part === 'string') return part;
        if (JSON.stringify(part) === JSON.stringify(arnOf(stack.flowRunner.handler))) return 'FLOW_RUNNER_ARN';
        if (JSON.stringify(part) === JSON.stringify({ Ref: logicalId(stack.jobQueue.queue) })) return 'JOBS_QUEUE_URL';
        throw new Error(`unexpected reference in the definition: ${JSON.stringify(part)}`);
      })
      .join('');
    expect(JSON.parse(json)).toEqual(flowRunnerDefinition({ flowRunnerFunctionArn: 'FLOW_RUNNER_ARN', jobsQueueUrl: 'JOBS_QUEUE_URL', stepTimeoutSeconds: 840 + 900 }));
  });

  it('waits at an approval step or ConsentGate on a .waitForTaskToken task timed out by TimeoutSecondsPath, then advances again', () => {
    const states = JSON.parse(JSON.stringify(flowRunnerDefinition({ flowRunnerFunctionArn: 'F', jobsQueueUrl: 'Q', stepTimeoutSeconds: 1 }))).States;
    // Advance hands a wait with a deadline over by its error; two Pass states read the answer back.
    expect(states.Advance.Catch).toContainEqual({ ErrorEquals: ['FlowWaitUntilDeadline'], Next: 'WaitUntilDeadlineCause' });
    expect(states.WaitUntilDeadlineTurn).toMatchObject({ Type: 'Pass', OutputPath: '$.turn', Next: 'WaitUntilDeadline' });
    expect(states.WaitUntilDeadline).toMatchObject({
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
      TimeoutSecondsPath: '$.timeoutSeconds',
      Parameters: { Payload: { op: 'park', 'taskToken.$': '$$.Task.Token' } },
      Catch: expect.arrayContaining([{ ErrorEquals: ['States.Timeout'], ResultPath: null, Next: 'Advance' }]),
      Next: 'Advance',
    });
    expect(states.WaitUntilDeadline.TimeoutSeconds).toBeUndefined();
  });

  it('may call the flow-runner function, send to the jobs queue and run itself for sub-flows, nothing more', () => {
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p: any) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === logicalId(stack.flowRunner.stateMachine.role)))
      .flatMap((p: any) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>);
    const actions = statements.flatMap((st) => [st.Action].flat()).sort();
    expect(actions).toEqual(
      [
        'events:DescribeRule', 'events:PutRule', 'events:PutTargets',
        'lambda:InvokeFunction',
        'logs:CreateLogDelivery', 'logs:DeleteLogDelivery', 'logs:DescribeLogGroups', 'logs:DescribeResourcePolicies', 'logs:GetLogDelivery', 'logs:ListLogDeliveries', 'logs:PutResourcePolicy', 'logs:UpdateLogDelivery',
        'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage',
        'states:DescribeExecution', 'states:StartExecution', 'states:StopExecution',
        'xray:GetSamplingRules', 'xray:GetSamplingTargets', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments',
      ].sort(),
    );
    const invoke = statements.find((st) => st.Action === 'lambda:InvokeFunction')!;
    expect(JSON.stringify(invoke.Resource)).toContain(logicalId(stack.flowRunner.handler));
    expect(statements.find((st) => [st.Action].flat().includes('sqs:SendMessage'))!.Resource).toEqual(arnOf(stack.jobQueue.queue));
  });

  it('is named to the api, which starts flows, and to the flow runner, which continues them (STATE_MACHINE_ARN)', () => {
    expect(JSON.stringify(propsOf(stack.api.handler).Environment.Variables.STATE_MACHINE_ARN)).toMatch(/:stateMachine:svc-dev-flow-runner/);
    expect(JSON.stringify(propsOf(stack.flowRunner.handler).Environment.Variables.STATE_MACHINE_ARN)).toMatch(/:stateMachine:svc-dev-flow-runner/);
  });

  it('ends the execution with Advance when the flow succeeded, and hands every other answer over by error, never retried', () => {
    const states = JSON.parse(JSON.stringify(flowRunnerDefinition({ flowRunnerFunctionArn: 'F', jobsQueueUrl: 'Q', stepTimeoutSeconds: 60 }))).States;
    expect(states.Advance).toMatchObject({ Type: 'Task', End: true, OutputPath: '$.Payload' });
    expect(states.Advance.Next).toBeUndefined();
    expect(states.Route).toBeUndefined();
    const handOvers = ['FlowRunStep', 'FlowRunSteps', 'FlowWaitUntilDeadline', 'FlowWaitForWake', 'FlowContinue', 'FlowFailed', 'FlowCanceled'];
    // Its first retrier takes the hand-overs (no retry) before States.ALL's; States.ALL's catcher (Abandon) comes last.
    expect(states.Advance.Retry[0]).toEqual({ ErrorEquals: handOvers, MaxAttempts: 0 });
    expect(states.Advance.Retry.at(-1).ErrorEquals).toEqual(['States.ALL']);
    expect(states.Advance.Catch.map((c: { ErrorEquals: string[] }) => c.ErrorEquals[0])).toEqual([...handOvers, 'States.ALL']);
    expect(states.Advance.Catch.at(-1)).toEqual({ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'Abandon' });
    expect(states.Advance.Catch.slice(4, 7).map((c: { Next: string }) => c.Next)).toEqual(['Continued', 'Failed', 'Canceled']);
    // The Cause is the Lambda error's JSON; its errorMessage is Advance's answer as JSON.
    expect(states.RunScriptStepCause).toEqual({ Type: 'Pass', Parameters: { 'lambdaError.$': 'States.StringToJson($.Cause)' }, Next: 'RunScriptStepTurn' });
    expect(states.RunScriptStepTurn).toEqual({ Type: 'Pass', Parameters: { 'turn.$': 'States.StringToJson($.lambdaError.errorMessage)' }, OutputPath: '$.turn', Next: 'RunScriptStep' });
  });

  it('runs a lone script step in four states (Advance, the two that read its hand-over, RunScriptStep) and the rest through the Map', () => {
    const states = JSON.parse(JSON.stringify(flowRunnerDefinition({ flowRunnerFunctionArn: 'F', jobsQueueUrl: 'Q', stepTimeoutSeconds: 60 }))).States;
    expect(states.Advance.Catch[0]).toEqual({ ErrorEquals: ['FlowRunStep'], Next: 'RunScriptStepCause' });
    expect(states.RunScriptStep).toMatchObject({
      Type: 'Task',
      Resource: 'arn:aws:states:::sqs:sendMessage.waitForTaskToken',
      Parameters: { QueueUrl: 'Q', MessageBody: { 'jobId.$': '$.step.jobId', 'taskToken.$': '$$.Task.Token' } },
      TimeoutSeconds: 60,
      ResultPath: null,
      Next: 'Advance',
    });
    expect(states.RunSteps.ItemProcessor.States.StepKind.Default).toBe('RunBatchedScript');
  });

  it('continues a flow as a new execution, and waits at most a day before looking again', () => {
    const states = JSON.parse(JSON.stringify(flowRunnerDefinition({ flowRunnerFunctionArn: 'F', jobsQueueUrl: 'Q', stepTimeoutSeconds: 60 }))).States;
    expect(states.Advance.Catch).toContainEqual({ ErrorEquals: ['FlowContinue'], Next: 'Continued' });
    expect(states.Continued.Type).toBe('Succeed');
    expect(states.Advance.Parameters.Payload).toMatchObject({ 'events.$': '$.events', 'execution.$': '$$.Execution.Name', 'startedAt.$': '$$.Execution.StartTime', wakeCheckSeconds: 86_400 });
    expect(states.WaitForWake.TimeoutSeconds).toBe(86_400);
    // A child execution starts with its history count at zero, like one the dispatcher starts.
    expect(states.RunSteps.ItemProcessor.States.RunSubFlow.Parameters.Input.events).toBe(0);
  });
});

describe('webhook events', () => {
  it('start the events function from the table stream, for inserted and redelivered outbox items only', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(stack.events.handler) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.data.table), 'StreamArn'] },
      StartingPosition: 'LATEST',
      FilterCriteria: { Filters: EVENTS_STREAM_FILTERS.map((p) => ({ Pattern: JSON.stringify(p) })) },
    });
  });

  it('retry due deliveries every minute on an EventBridge schedule', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: arnOf(stack.events.handler), RetryPolicy: { MaximumRetryAttempts: 2 } })],
    });
  });

  it('give the events function the table and the settings the handler reads, and a timeout past its stay for retries', () => {
    const fn = propsOf(stack.events.handler);
    expect(fn.Timeout).toBe(120);
    expect(Object.keys(fn.Environment.Variables)).toEqual(expect.arrayContaining(['TABLE_NAME', 'SIGNING_KEY_SECRET_ARN', 'SECRETS_KMS_KEY_ID']));
    expect(fn.VpcConfig).toBeUndefined();
  });
});

describe('maintenance', () => {
  it('sweeps expired tokens every hour on an EventBridge schedule', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 hour)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: arnOf(stack.maintenance.handler), RetryPolicy: { MaximumRetryAttempts: 2 } })],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', { FunctionName: arnOf(stack.maintenance.handler), Principal: 'events.amazonaws.com' });
  });

  it('sends email only when a sender is configured, and then only from that identity', () => {
    expect(propsOf(stack.maintenance.handler).Environment.Variables.SES_FROM_ADDRESS).toBeUndefined();
    const sesGrants = (t: Template) =>
      Object.values(t.findResources('AWS::IAM::Policy')).flatMap((p: any) => (p.Properties.PolicyDocument.Statement as Array<Record<string, any>>).filter((st) => [st.Action].flat().some((a: string) => a.startsWith('ses:'))));
    expect(sesGrants(template)).toEqual([]);

    const withMail = buildSvcApp({ bundle: false, props: { notificationSender: 'svc@example.com' } }).stack;
    const t = Template.fromStack(withMail);
    expect(t.toJSON().Resources[logicalId(withMail.maintenance.handler)].Properties.Environment.Variables.SES_FROM_ADDRESS).toBe('svc@example.com');
    const [grant] = sesGrants(t);
    expect(grant.Action).toBe('ses:SendEmail');
    const identities = (grant.Resource as Array<{ 'Fn::Join': [string, unknown[]] }>).map((r) => String(r['Fn::Join'][1].at(-1))).sort();
    expect(identities).toEqual([':identity/example.com', ':identity/svc@example.com']);
    expect(() => buildSvcApp({ bundle: false, props: { notificationSender: 'not an address' } })).toThrow(/notificationSender/);
  });

  it('has an encrypted, TLS-only approvals topic that only the flow runner may publish to, named to the api and the flow runner', () => {
    const topicId = logicalId(stack.flowRunner.approvalsTopic);
    const topic = template.toJSON().Resources[topicId];
    expect(topic.Type).toBe('AWS::SNS::Topic');
    expect(topic.Properties.KmsMasterKeyId).toBeDefined();
    expect(propsOf(stack.flowRunner.handler).Environment.Variables.APPROVALS_TOPIC_ARN).toEqual({ Ref: topicId });
    expect(propsOf(stack.api.handler).Environment.Variables.APPROVALS_TOPIC_ARN).toEqual({ Ref: topicId });
    const publishers = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p: any) => (p.Properties.PolicyDocument.Statement as Array<Record<string, any>>).some((st) => [st.Action].flat().includes('sns:Publish') && JSON.stringify(st.Resource).includes(topicId)))
      .flatMap((p: any) => (p.Properties.Roles as Array<{ Ref: string }>).map((r) => r.Ref));
    expect(publishers).toEqual([propsOf(stack.flowRunner.handler).Role['Fn::GetAtt'][0]]);
    const tlsOnly = Object.values(template.findResources('AWS::SNS::TopicPolicy')).some((p: any) =>
      JSON.stringify(p.Properties.Topics).includes(topicId) && JSON.stringify(p.Properties.PolicyDocument).includes('aws:SecureTransport'));
    expect(tlsOnly).toBe(true);
    expect((template.toJSON().Outputs as Record<string, { Value: unknown }>).ApprovalsTopicArn.Value).toEqual({ Ref: topicId });
  });

  it('lets the flow runner mail ConsentGate approvers, from the configured sender only', () => {
    expect(propsOf(stack.flowRunner.handler).Environment.Variables.SES_FROM_ADDRESS).toBeUndefined();
    const withMail = buildSvcApp({ bundle: false, props: { notificationSender: 'svc@example.com' } }).stack;
    const t = Template.fromStack(withMail);
    expect(t.toJSON().Resources[logicalId(withMail.flowRunner.handler)].Properties.Environment.Variables.SES_FROM_ADDRESS).toBe('svc@example.com');
    const roleId = t.toJSON().Resources[logicalId(withMail.flowRunner.handler)].Properties.Role['Fn::GetAtt'][0];
    const statements = Object.values(t.findResources('AWS::IAM::Policy'))
      .filter((p: any) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === roleId))
      .flatMap((p: any) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>);
    const ses = statements.filter((st) => [st.Action].flat().some((a: string) => a.startsWith('ses:')));
    expect(ses).toHaveLength(1);
    expect(ses[0].Action).toBe('ses:SendEmail');
    expect((ses[0].Resource as Array<{ 'Fn::Join': [string, unknown[]] }>).map((r) => String(r['Fn::Join'][1].at(-1))).sort()).toEqual([':identity/example.com', ':identity/svc@example.com']);
  });
});

describe('API Gateway', () => {
  it('proxies the root and every path to the api function through response streaming', () => {
    const methods = Object.values(template.findResources('AWS::ApiGateway::Method')) as Resource[];
    expect(methods).toHaveLength(2);
    for (const method of methods) {
      expect(method.Properties.HttpMethod).toBe('ANY');
      const integration = method.Properties.Integration;
      expect(integration).toMatchObject({ Type: 'AWS_PROXY', ResponseTransferMode: 'STREAM', TimeoutInMillis: 900_000 });
      const uriParts: unknown[] = integration.Uri['Fn::Join'][1];
      expect(uriParts).toContainEqual(arnOf(stack.api.handler));
      expect(uriParts.at(-1)).toBe('/response-streaming-invocations');
    }
    template.hasResourceProperties('AWS::ApiGateway::Resource', { PathPart: '{proxy+}' });
  });

  it("passes every request body on base64-encoded, so the app reads the caller's bytes (test/aws/api-gateway-proxy.ts does the same)", () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: BINARY_MEDIA_TYPES });
  });

  it('deploys the stage named after the stage setting, with access logs and throttling', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'dev',
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.anyValue() },
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200, DataTraceEnabled: false })],
    });
  });
});

describe('IAM boundaries', () => {
  const policies = (): Resource[] => Object.values(template.findResources('AWS::IAM::Policy')) as Resource[];
  const statementsOf = (role: Parameters<typeof logicalId>[0]) =>
    policies()
      .filter((p) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === logicalId(role)))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>);

  it('gives the sandbox roles no permission usable from inside: Lambda may place them in their VPC, every call from the environment is denied', () => {
    for (const role of [stack.sandboxes.nodeSandboxRole, stack.sandboxes.pythonSandboxRole]) {
      const props = propsOf(role);
      expect(props.ManagedPolicyArns).toBeUndefined();
      expect(props.Policies).toBeUndefined();
      const statements = statementsOf(role);
      expect(statements.filter((s) => s.Effect === 'Allow').flatMap((s) => [s.Action].flat()).every((a: string) => a.startsWith('ec2:') && /NetworkInterface|Subnets|PrivateIpAddresses/.test(a))).toBe(true);
      expect(statements).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Action: '*', Resource: '*', Condition: { Null: { 'lambda:SourceFunctionArn': 'false' } } }),
      );
    }
    template.resourcePropertiesCountIs('AWS::IAM::ManagedPolicy', {}, 0);
  });

  it("puts both sandboxes in their VPC's private subnets, whose network ACL denies the addresses jobs may not reach", () => {
    const subnets = stack.sandboxes.network.vpc.selectSubnets({ subnetGroupName: 'jobs' }).subnetIds.map((id) => stack.resolve(id));
    for (const fn of [stack.sandboxes.nodeSandbox, stack.sandboxes.pythonSandbox]) {
      expect(propsOf(fn).VpcConfig.SubnetIds).toEqual(subnets);
    }
    const aclId = logicalId(stack.sandboxes.network.acl);
    const entries = Object.values(template.findResources('AWS::EC2::NetworkAclEntry'))
      .map((r) => r.Properties)
      .filter((p) => p.NetworkAclId.Ref === aclId && p.Egress === true);
    const denied = entries.filter((p) => p.RuleAction === 'deny').map((p) => p.CidrBlock);
    for (const cidr of ['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16']) expect(denied).toContain(cidr);
    // Denies come first; then the rest of the internet, through the NAT gateway.
    const allow = entries.find((p) => p.RuleAction === 'allow' && p.CidrBlock === '0.0.0.0/0');
    expect(allow.RuleNumber).toBeGreaterThan(Math.max(...entries.filter((p) => p.RuleAction === 'deny').map((p) => p.RuleNumber)));
    template.resourceCountIs('AWS::EC2::NatGateway', 1);
    template.hasResourceProperties('AWS::EC2::FlowLog', { TrafficType: 'REJECT' });
  });

  it('runs both sandboxes in Lambda tenant isolation mode, so an execution environment never serves two tenants', () => {
    for (const fn of [stack.sandboxes.nodeSandbox, stack.sandboxes.pythonSandbox]) {
      expect(propsOf(fn).TenancyConfig).toEqual({ TenantIsolationMode: 'PER_TENANT' });
    }
  });

  it('keeps service settings out of the sandboxes', () => {
    expect(propsOf(stack.sandboxes.nodeSandbox).Environment).toBeUndefined();
    expect(propsOf(stack.sandboxes.pythonSandbox).Environment).toBeUndefined();
  });

  it('lets only the api, the worker and the flow runner invoke Lambda: each both sandboxes, the api the dependency builder', () => {
    const invokes = [stack.api.handler.role!, stack.worker.handler.role!, stack.flowRunner.handler.role!].flatMap((role) =>
      statementsOf(role)
        .filter((s) => [s.Action].flat().some((a: string) => a.startsWith('lambda:')))
        .map((s) => ({ role: logicalId(role), ...s })),
    );
    expect(invokes).toEqual([
      // Sync webhooks' and SSE streams' jobs run from the api (billed once: no worker in between).
      expect.objectContaining({
        role: logicalId(stack.api.handler.role!),
        Effect: 'Allow',
        Action: 'lambda:InvokeFunction',
        Resource: [arnOf(stack.sandboxes.nodeSandbox), arnOf(stack.sandboxes.pythonSandbox)],
      }),
      // Resolutions at create and builds off the run path (docs/dependencies-aws.md).
      expect.objectContaining({ role: logicalId(stack.api.handler.role!), Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: arnOf(stack.dependencyBuilder.handler) }),
      expect.objectContaining({
        role: logicalId(stack.worker.handler.role!),
        Effect: 'Allow',
        Action: 'lambda:InvokeFunction',
        Resource: [arnOf(stack.sandboxes.nodeSandbox), arnOf(stack.sandboxes.pythonSandbox)],
      }),
      // Flow expressions are user code too, and plain steps run inside Advance go to either sandbox.
      expect.objectContaining({
        role: logicalId(stack.flowRunner.handler.role!),
        Effect: 'Allow',
        Action: 'lambda:InvokeFunction',
        Resource: [arnOf(stack.sandboxes.nodeSandbox), arnOf(stack.sandboxes.pythonSandbox)],
      }),
    ]);
  });

  it('lets the dispatcher start flows and the flow runner continue them as new executions, and the api and worker only wake them, on the flow-runner state machine alone', () => {
    const sfnGrants = (role: Parameters<typeof logicalId>[0]) =>
      statementsOf(role)
        .filter((s) => [s.Action].flat().some((a: string) => a.startsWith('states:')))
        .map((s) => ({ actions: [s.Action].flat().sort(), resource: JSON.stringify(s.Resource) }));
    const onlyThisMachine = expect.stringMatching(/:stateMachine:svc-dev-flow-runner"\]\]\}$/);
    expect(sfnGrants(stack.api.handler.role!)).toEqual([{ actions: ['states:SendTaskSuccess'], resource: onlyThisMachine }]);
    expect(sfnGrants(stack.jobDelivery.dispatcher.role!)).toEqual([{ actions: ['states:StartExecution'], resource: onlyThisMachine }]);
    expect(sfnGrants(stack.worker.handler.role!)).toEqual([{ actions: ['states:SendTaskSuccess'], resource: onlyThisMachine }]);
    expect(sfnGrants(stack.flowRunner.handler.role!)).toEqual([{ actions: ['states:SendTaskSuccess', 'states:StartExecution'], resource: onlyThisMachine }]);
    // It wakes flows at a gate whose notices a crashed turn left unsent.
    expect(sfnGrants(stack.maintenance.handler.role!)).toEqual([{ actions: ['states:SendTaskSuccess'], resource: onlyThisMachine }]);
  });

  it('lets the api read both secrets and the worker only the signing key', () => {
    const secretReads = (role: Parameters<typeof logicalId>[0]) =>
      statementsOf(role)
        .filter((s) => [s.Action].flat().includes('secretsmanager:GetSecretValue'))
        .flatMap((s) => [s.Resource].flat());
    const signingKey = { Ref: logicalId(stack.secrets.signingKey) };
    const adminToken = { Ref: logicalId(stack.secrets.adminToken) };
    expect(secretReads(stack.api.handler.role!)).toEqual(expect.arrayContaining([signingKey, adminToken]));
    expect(secretReads(stack.worker.handler.role!)).toEqual([signingKey]);
    expect(secretReads(stack.events.handler.role!)).toEqual([signingKey]);
  });

  it('lets only the api, the worker, the events function and the flow runner (a gate chat notice reads its Slack connection) use the secret variables key, to make and open data keys', () => {
    const key = arnOf(stack.secrets.secretVariablesKey);
    const kmsStatements = policies().flatMap((p) =>
      (p.Properties.PolicyDocument.Statement as Array<Record<string, any>>)
        .filter((s) => [s.Action].flat().some((a: string) => a.startsWith('kms:')) || JSON.stringify(s.Resource ?? null).includes(key['Fn::GetAtt'][0]))
        .map((s) => ({ roles: p.Properties.Roles, ...s })),
    );
    expect(kmsStatements).toEqual(
      [stack.flowRunner.handler.role!, stack.api.handler.role!, stack.worker.handler.role!, stack.events.handler.role!].map((role) =>
        expect.objectContaining({ roles: [{ Ref: logicalId(role) }], Effect: 'Allow', Action: ['kms:Decrypt', 'kms:GenerateDataKey'], Resource: key }),
      ),
    );
    // The key policy names no function: it only delegates to IAM, where the grants above live.
    const keyPolicy = propsOf(stack.secrets.secretVariablesKey).KeyPolicy.Statement as Array<Record<string, any>>;
    expect(keyPolicy).toHaveLength(1);
    expect(JSON.stringify(keyPolicy[0].Principal)).toMatch(/:root/);
  });

  it('generates a 64-character hex signing key', () => {
    expect(propsOf(stack.secrets.signingKey).GenerateSecretString).toMatchObject({
      PasswordLength: 64,
      ExcludeUppercase: true,
      ExcludePunctuation: true,
      ExcludeCharacters: 'ghijklmnopqrstuvwxyz',
    });
  });
});

describe('secret variables key', () => {
  it('is a customer managed symmetric key with yearly rotation, deleted with a dev stack', () => {
    const key = template.toJSON().Resources[logicalId(stack.secrets.secretVariablesKey)] as Resource;
    expect(key.Properties).toMatchObject({ EnableKeyRotation: true });
    expect(key.Properties.KeySpec ?? 'SYMMETRIC_DEFAULT').toBe('SYMMETRIC_DEFAULT');
    expect(key.DeletionPolicy).toBe('Delete');
  });
});

describe('outputs', () => {
  it('name the API URL and the admin token secret', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['ApiUrl', 'AdminTokenSecretName', 'AdminTokenSecretArn', 'AlarmTopicArn']));
    expect(outputs.AdminTokenSecretArn.Value).toEqual({ Ref: logicalId(stack.secrets.adminToken) });
    expect(JSON.stringify(outputs.ApiUrl.Value)).toContain(logicalId(stack.api.restApi));
  });
});

describe('settings', () => {
  it('retains data and protects the table on the prod stage', () => {
    const prod = Template.fromStack(buildSvcApp({ bundle: false, props: { stage: 'prod' } }).stack);
    prod.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', Properties: Match.objectLike({ DeletionProtectionEnabled: true }) });
    prod.allResources('AWS::S3::Bucket', { DeletionPolicy: 'Retain' });
    prod.allResources('AWS::SecretsManager::Secret', { DeletionPolicy: 'Retain' });
    // Without the secret variables key, the stored secret variables could never be read again.
    prod.allResources('AWS::KMS::Key', { DeletionPolicy: 'Retain' });
    prod.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: 'prod' });
  });

  it('passes the sync wait, job timeout and log retention through', () => {
    const custom = buildSvcApp({ bundle: false, props: { syncMaxWaitSeconds: 120, jobTimeoutSeconds: 600, logRetentionDays: 7 } }).stack;
    const t = Template.fromStack(custom);
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ SYNC_MAX_WAIT_SECONDS: '120', JOB_TIMEOUT_SECONDS: '600' }) },
    });
    t.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
  });

  it('rejects settings Lambda cannot honour', () => {
    expect(() => buildSvcApp({ bundle: false, props: { jobTimeoutSeconds: 901 } })).toThrow(/jobTimeoutSeconds/);
    expect(() => buildSvcApp({ bundle: false, props: { syncMaxWaitSeconds: 0 } })).toThrow(/syncMaxWaitSeconds/);
    expect(() => buildSvcApp({ bundle: false, props: { logRetentionDays: 31 as RetentionDays } })).toThrow(/logRetentionDays/);
    expect(() => buildSvcApp({ bundle: false, props: { stage: 'no spaces' } })).toThrow(/stage/);
  });
});
