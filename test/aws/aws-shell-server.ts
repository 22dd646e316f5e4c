/**
 * The AWS shell on one machine: `node --import tsx test/aws/aws-shell-server.ts`. Starts the
 * emulators (aws-emulators.ts; under vitest it uses the run's shared DynamoDB Local and moto,
 * which the harness names in SVC_TEST_SHARED_DYNAMODB_ENDPOINT and SVC_TEST_SHARED_KMS_ENDPOINT),
 * then serves HTTP on HOST:PORT (127.0.0.1, PORT=0: any free port) the way API Gateway would: each request becomes a REST proxy event for the real api handler,
 * whose response stream is read as API Gateway reads it (and which runs sync webhooks' and SSE
 * streams' jobs itself, through the sandbox handlers in this process). A second process plays the worker
 * Lambda's SQS event source (sqs-event-source.ts); the table's stream feeds the job dispatcher handler here
 * (dynamodb-stream-event-source.ts), as its stream mapping would. Flows run on the Step Functions emulator
 * (step-functions-local.ts) executing the flow-runner state machine, whose Lambda tasks call the
 * real flow-runner handler in this process; the maintenance handler runs on a timer, as on its
 * EventBridge schedule (every SVC_TOKEN_SWEEP_SECONDS), and schedules' tick function as
 * EventBridge Scheduler would invoke it (scheduler-local.ts). Prints `svc listening on <url>` like
 * `svc serve`, and takes the local shell's settings (SVC_*), so the http-tier tests run against it.
 *
 * Stops everything it started (emulators, Java, moto, the worker process and its sandboxes) on SIGTERM
 * or SIGINT, and when the process that started it goes away; on shared emulators it drops its
 * table and key instead.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DynamoDBStreamEvent, ScheduledEvent } from 'aws-lambda';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BINARY_MEDIA_TYPES, proxyEvent, sendStreamedResponse } from './api-gateway-proxy.js';
import { startAwsEmulators, type AwsEmulators } from './aws-emulators.js';
import { sharedEndpointsFromEnv } from './shared-endpoints.js';
import { S3_EMULATOR_ADDRESS } from './s3-local.js';
import { dynamoClient } from './dynamodb-local.js';
import { startStreamEventSource, streamsClient } from './dynamodb-stream-event-source.js';
import { onDynamoWrite } from './dynamodb-write-observer.js';
import { watchDynamoRequests } from './dynamodb-http-requests.js';
import { startFlowRunnerLocal } from './flow-runner-local.js';
import { FLOW_RUNNER_TIMEOUT_SECONDS } from '../../statemachines/flow-runner.js';
import type { ExecutionStatusChangeEvent } from './step-functions-local.js';
import { matchesExecutionStatusPattern } from '../../lib/constructs/execution-status-rule.js';
import { DEFAULT_AGE_BUDGET_SECONDS, DEFAULT_EVENT_BUDGET } from '../../functions/adapters/aws/flow-execution-budget.js';
import { sqsClient } from './sqs-local.js';
import { countingDynamoRequests, emptyRequests, installDynamoRequestCounter } from './dynamodb-request-counter.js';
import { lambdaContext } from './lambda-context.js';
import { installLambdaStreamingGlobals, invokeStreaming } from './lambda-streaming-runtime.js';
import { EVENTS_STREAM_FILTERS } from '../../lib/constructs/events-filter.js';
import { startLocalScheduler, startWakeUps } from './scheduler-local.js';
import type { ResolveAnswer } from '../../functions/adapters/aws/dependency-builds.js';
import type { SandboxEvent, SandboxInvoke } from '../../functions/adapters/aws/sandbox-protocol.js';

const STAGE = 'local';
/** The api function's timeout in the stack (lib/constructs/api.ts): Lambda's maximum. */
const API_TIMEOUT_MS = 900_000;
/** The worker's event source beside this file: bundled with it (aws-shell-bundle.ts), or its source run through tsx. */
const EVENT_SOURCE_ARGS = import.meta.url.endsWith('.mjs')
  ? ['--enable-source-maps', resolve(import.meta.dirname, 'sqs-event-source.mjs')]
  : ['--import', 'tsx', resolve(import.meta.dirname, 'sqs-event-source.ts')];

/** The local shell's setting names, as the harness passes them, and the Lambda variables they set. */
const RENAMED_SETTINGS: Record<string, string> = {
  SVC_JOB_TIMEOUT_SECONDS: 'JOB_TIMEOUT_SECONDS',
  SVC_JOB_LEASE_MARGIN_SECONDS: 'JOB_LEASE_MARGIN_SECONDS',
  SVC_SYNC_MAX_WAIT_SECONDS: 'SYNC_MAX_WAIT_SECONDS',
  SVC_MAX_OUTPUT_BYTES: 'MAX_OUTPUT_BYTES',
  SVC_MAX_BODY_BYTES: 'MAX_BODY_BYTES',
  SVC_SSE_KEEPALIVE_SECONDS: 'SSE_KEEPALIVE_SECONDS',
  SVC_SSE_MAX_SECONDS: 'SSE_MAX_SECONDS',
  SVC_BASE_URL: 'API_BASE_URL',
  SVC_MAX_UPLOAD_BYTES: 'MAX_UPLOAD_BYTES',
  SVC_UPLOAD_PART_BYTES: 'UPLOAD_PART_BYTES',
  SVC_UPLOAD_URL_SECONDS: 'UPLOAD_URL_SECONDS',
  SVC_FLOW_MAX_WHILE_ITERATIONS: 'FLOW_MAX_WHILE_ITERATIONS',
  SVC_FLOW_MAX_LOOP_ITEMS: 'FLOW_MAX_LOOP_ITEMS',
  SVC_MAX_RUN_DEPTH: 'MAX_RUN_DEPTH',
  SVC_MAX_QUEUED_JOBS_PER_WORKSPACE: 'MAX_QUEUED_JOBS_PER_WORKSPACE',
  SVC_MAX_JOBS_PER_RUN: 'MAX_JOBS_PER_RUN',
};

const cleanups: Array<() => Promise<void> | void> = [];
let stopping = false;

/** The flow-runner invocation running here: what ends it at once, as its runtime exiting would. */
const invocation = new AsyncLocalStorage<{ crash: (error: Error) => void }>();

/**
 * Lambda ends an invocation at its timeout, or when its runtime exits (a crash, an out-of-memory
 * kill), and the task fails (Step Functions then retries it). Here the handler's promise is left
 * behind instead: what it does later is what a frozen, then discarded, execution environment
 * would never do, so a test that uses this makes it never settle.
 */
async function withinLambdaTimeout<T>(timeoutMs: number, invoke: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let crash: (error: Error) => void = () => undefined;
  const ended = new Promise<never>((_, reject) => {
    crash = reject;
    timer = setTimeout(() => reject(new Error(`Task timed out after ${timeoutMs / 1000} seconds`)), timeoutMs);
  });
  try {
    return await Promise.race([invocation.run({ crash }, invoke), ended]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The flow runner's sandbox, which (when SVC_TEST_FLOW_RUNNER_LOSE_ONCE names a text) answers
 * nothing, ever, to the first request whose code holds that text, and ends the invocation that
 * sent it there and then, as its runtime exiting would (Lambda's `Runtime.ExitError`): the flow
 * runner dies mid-step, leaving the step running under its lease.
 */
function lostOnce(invoke: SandboxInvoke): SandboxInvoke {
  const marker = process.env.SVC_TEST_FLOW_RUNNER_LOSE_ONCE;
  let lost = false;
  return (request, signal) => {
    if (!marker || lost || !request.content.includes(marker)) return invoke(request, signal);
    lost = true;
    invocation.getStore()?.crash(Object.assign(new Error('Runtime exited with error: signal: killed'), { name: 'Runtime.ExitError' }));
    return {
      [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<SandboxEvent>>(() => undefined) }),
    };
  };
}

/**
 * With SVC_TEST_COUNT_DYNAMODB=true, each flow-runner invocation prints the DynamoDB requests it
 * made (`dynamodb requests of flow-runner <op> <flow job id>: <json>`), and so does each api
 * request (`... of api <method> <path>: <json>`), for the cost test.
 */
const countDynamo = process.env.SVC_TEST_COUNT_DYNAMODB === 'true';

const what = (payload: unknown): string => {
  const { op, flowJobId, httpMethod, path } = payload as { op?: string; flowJobId?: string; httpMethod?: string; path?: string };
  return op ? `flow-runner ${op} ${flowJobId}` : `api ${httpMethod} ${path}`;
};

/**
 * With SVC_TEST_REPORT_RSS=true, each flow-runner invocation prints the highest resident set size
 * of this process seen while it ran, sampled every 10 ms (`rss of flow-runner <op> <id>: <MB> ...`),
 * with the process's size at its start and its JS heap's:
 * an upper bound of the flow runner's own, as the api and the emulators' clients share the process.
 */
const reportRss = process.env.SVC_TEST_REPORT_RSS === 'true';

async function counted<T>(payload: unknown, invoke: () => Promise<T>): Promise<T> {
  if (reportRss && (payload as { op?: string }).op) {
    const start = process.memoryUsage();
    let peak = start.rss;
    let heap = start.heapUsed;
    const sample = setInterval(() => {
      const m = process.memoryUsage();
      peak = Math.max(peak, m.rss);
      heap = Math.max(heap, m.heapUsed);
    }, 10);
    try {
      return await countedDynamo(payload, invoke);
    } finally {
      clearInterval(sample);
      const mb = (n: number) => (n / 2 ** 20).toFixed(0);
      console.log(`rss of ${what(payload)}: ${mb(Math.max(peak, process.memoryUsage().rss))} (at its start ${mb(start.rss)}; heap used ${mb(start.heapUsed)} -> peak ${mb(heap)})`);
    }
  }
  return countedDynamo(payload, invoke);
}

async function countedDynamo<T>(payload: unknown, invoke: () => Promise<T>): Promise<T> {
  if (!countDynamo) return invoke();
  const counts = emptyRequests();
  try {
    return await countingDynamoRequests(counts, invoke);
  } finally {
    console.log(`dynamodb requests of ${what(payload)}: ${JSON.stringify(counts)}`);
  }
}

async function main(): Promise<void> {
  // Before any client sends: the stream pollers are woken by the writes of clients made later.
  watchDynamoRequests();
  if (countDynamo) installDynamoRequestCounter();
  const ownDataDir = !process.env.SVC_DATA_DIR;
  const dataDir = process.env.SVC_DATA_DIR ? resolve(process.env.SVC_DATA_DIR) : mkdtempSync(join(tmpdir(), 'svc-aws-shell-'));
  if (ownDataDir) cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));

  const emulators = await startAwsEmulators({ dataDir, shared: sharedEndpointsFromEnv(process.env) });
  cleanups.push(() => emulators.stop());

  const server = createServer();
  cleanups.push(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  const url = await listen(server, process.env.HOST ?? '127.0.0.1', Number(process.env.PORT ?? 8000));

  const sandboxDir = sandboxWorkDir();
  const sqs = sqsClient(emulators.env.AWS_ENDPOINT_URL_SQS);
  cleanups.push(() => sqs.destroy());
  // The handler module reads its environment when first invoked, by then set below.
  const flowRunnerHandler = import('../../functions/handlers/flow-runner.js').then(async ({ createFlowRunnerHandler }) => {
    const { inProcessInvoke } = await import('../../functions/adapters/aws/sandbox-in-process.js');
    const { setSandboxWorkDir } = await import('../../functions/handlers/sandbox.js');
    setSandboxWorkDir(sandboxDir);
    // Plain steps run inside Advance as the stack deploys it, unless a test turns it off (SVC_FLOW_INLINE_STEPS=false).
    return createFlowRunnerHandler(() => lostOnce(inProcessInvoke()), { budget: flowExecutionBudget(), inlineSteps: process.env.SVC_FLOW_INLINE_STEPS !== 'false' });
  });
  const jobTimeoutSeconds = Number(process.env.SVC_JOB_TIMEOUT_SECONDS || 600);
  // A test may shorten the function's timeout (SVC_TEST_FLOW_RUNNER_TIMEOUT_SECONDS), to see which steps fit in it.
  const flowRunnerTimeoutMs = Number(process.env.SVC_TEST_FLOW_RUNNER_TIMEOUT_SECONDS || FLOW_RUNNER_TIMEOUT_SECONDS) * 1000;
  const flowRunner = await startFlowRunnerLocal({
    sqs,
    queueUrl: emulators.queueUrl,
    // Each call as one invocation of the deployed function, whose time left decides which steps it runs itself.
    flowRunner: async (payload) => withinLambdaTimeout(flowRunnerTimeoutMs, () => counted(payload, async () => (await flowRunnerHandler)(payload, lambdaContext('svc-local-flow-runner', flowRunnerTimeoutMs)))),
    stepTimeoutSeconds: jobTimeoutSeconds + 60,
    // A test of waits past a year or of full histories shortens the day and the budgets.
    ...(process.env.SVC_TEST_FLOW_WAKE_CHECK_SECONDS ? { wakeCheckSeconds: Number(process.env.SVC_TEST_FLOW_WAKE_CHECK_SECONDS) } : {}),
    onStatusChange: (event) => void deliverExecutionStatus(event),
  });
  cleanups.push(() => flowRunner.stop());

  const schedulerEnv = await startScheduler();
  const lambdaEnv = { ...lambdaEnvironment(emulators, url), ...flowRunner.env, ...schedulerEnv, ...dependencyDirs(sandboxDir) };
  // The api Lambda's environment is this process's; the worker process gets it too.
  Object.assign(process.env, lambdaEnv);
  // Before the handler module loads: it wraps itself with `awslambda.streamifyResponse` on import.
  installLambdaStreamingGlobals();
  // The api runs awaited jobs itself (sync webhooks, SSE streams) through the same sandbox
  // handlers the worker process uses.
  await useDependencyBuilderInProcess();
  const { createApiHandler } = await import('../../functions/handlers/api.js');
  const { inProcessInvoke } = await import('../../functions/adapters/aws/sandbox-in-process.js');
  const { closeSandbox, setSandboxWorkDir } = await import('../../functions/handlers/sandbox.js');
  setSandboxWorkDir(sandboxDir);
  // Its warm processes go, and with them their network namespaces and tmpfs mounts.
  cleanups.push(() => closeSandbox());
  const handler = createApiHandler(() => inProcessInvoke());
  await startJobDispatcher(emulators);
  // Nobody knows the URL before the line below is printed, so no request arrives before this.
  server.on('request', (req, res) => void serveRequest(handler, req, res));

  startFlowReconcile();
  const worker = startEventSource(lambdaEnv, sandboxDir);
  startSchedule(Number(process.env.SVC_TOKEN_SWEEP_SECONDS || 3600) * 1000);
  await startEventsFunction(lambdaEnv);
  cleanups.push(() => stopProcessGroup(worker));

  // Tests look at executions the way one would in the console, through the Step Functions API.
  console.log(`step functions endpoint ${flowRunner.endpoint}, state machine ${flowRunner.stateMachineArn}`);
  console.log(`svc listening on ${url} (AWS shell: api handler behind emulated API Gateway, SQS worker, Step Functions flow runner, DynamoDB Local, s3rver, moto KMS)`);
}

/** The flow runner's continue-as-new budgets, as deployed unless a test sets them lower. */
function flowExecutionBudget(): { events: number; ageSeconds: number } | undefined {
  const events = process.env.SVC_TEST_FLOW_EVENT_BUDGET;
  const age = process.env.SVC_TEST_FLOW_AGE_BUDGET_SECONDS;
  if (!events && !age) return undefined;
  return { events: Number(events || DEFAULT_EVENT_BUDGET), ageSeconds: Number(age || DEFAULT_AGE_BUDGET_SECONDS) };
}

function lambdaEnvironment(emulators: AwsEmulators, url: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined) env[RENAMED_SETTINGS[name] ?? name] = value;
  }
  return {
    ...env,
    ...emulators.env,
    API_BASE_URL: env.API_BASE_URL || url,
    // Jobs fetch presigned URLs of the bucket, a public endpoint on AWS and s3rver here: its own
    // loopback address is allowed through the job network boundary, nothing else on loopback.
    SVC_JOB_NETWORK_ALLOW: [env.SVC_JOB_NETWORK_ALLOW, S3_EMULATOR_ADDRESS].filter(Boolean).join(','),
    // The sandbox runs on this machine: Go binaries are built for its architecture.
    SANDBOX_ARCH: process.arch === 'arm64' ? 'arm64' : 'x86_64',
    // Secrets Manager's part: a new signing key per start (nothing outlives the emulators anyway).
    SIGNING_KEY_HEX: randomBytes(32).toString('hex'),
  };
}

async function serveRequest(handler: unknown, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const body = await readBody(req);
    const event = proxyEvent(req, body, { stage: STAGE, binaryMediaTypes: BINARY_MEDIA_TYPES });
    await counted(event, () => sendStreamedResponse(invokeStreaming(handler, event, lambdaContext('svc-api', API_TIMEOUT_MS)), res));
  } catch (error) {
    console.error(JSON.stringify({ level: 'error', msg: 'request failed', error: String(error) }));
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end('{"message":"Internal server error"}');
    else res.destroy();
  }
}

/**
 * The job dispatcher's stream mapping (lib/constructs/job-delivery.ts): the api only stores a job;
 * the table's stream hands it to the dispatcher handler, which sends it to the queue or starts its flow.
 */
async function startJobDispatcher(emulators: AwsEmulators): Promise<void> {
  const { handler } = await import('../../functions/handlers/job-dispatcher.js');
  const dynamo = dynamoClient(emulators.env.AWS_ENDPOINT_URL_DYNAMODB);
  const streams = streamsClient(emulators.env.AWS_ENDPOINT_URL_DYNAMODB);
  const source = await startStreamEventSource({
    dynamo,
    streams,
    tableName: emulators.env.TABLE_NAME,
    handler,
    // As the stack's mapping retries a batch before giving up on it.
    retryAttempts: 10,
    onError: (error) => console.error(JSON.stringify({ level: 'error', msg: 'job dispatcher stream', error: String(error) })),
  });
  // A job the api (or a flow runner) stores here is dispatched at once, not at the next idle poll.
  const unobserve = onDynamoWrite(() => source.wake());
  cleanups.push(async () => {
    unobserve();
    await source.stop();
    dynamo.destroy();
    streams.destroy();
  });
}

/**
 * EventBridge Scheduler's part (lib/constructs/schedules.ts): the api puts a schedule per svc
 * schedule into a stand-in speaking Scheduler's API (scheduler-local.ts), which invokes the real
 * tick handler in this process with each schedule's input, every wake-up delivered twice.
 */
async function startScheduler(): Promise<Record<string, string>> {
  const scheduler = await startLocalScheduler();
  const tick = import('../../functions/handlers/schedule-tick.js');
  const stop = startWakeUps(scheduler, async (input) => (await tick).handler(input as never), { deliveries: 2 });
  cleanups.push(() => {
    stop();
    return scheduler.stop();
  });
  return {
    AWS_ENDPOINT_URL_SCHEDULER: scheduler.endpoint,
    SCHEDULE_GROUP_NAME: 'svc-local',
    SCHEDULE_TARGET_ARN: 'arn:aws:lambda:us-east-1:000000000000:function:svc-schedule-tick',
    SCHEDULER_ROLE_ARN: 'arn:aws:iam::000000000000:role/svc-scheduler',
  };
}

/**
 * EventBridge's part for flow executions (lib/constructs/job-delivery.ts): the rule passes the
 * status changes of executions that ended badly to the reaper handler, which ends their jobs.
 */
async function deliverExecutionStatus(event: ExecutionStatusChangeEvent): Promise<void> {
  if (!matchesExecutionStatusPattern(event, event.detail.stateMachineArn) || event.detail.stateMachineArn !== process.env.STATE_MACHINE_ARN) return;
  try {
    const { handler } = await import('../../functions/handlers/reaper.js');
    await handler(event as unknown as Record<string, unknown>);
  } catch (error) {
    console.error(JSON.stringify({ level: 'error', msg: 'execution status event failed', error: String(error) }));
  }
}

/**
 * The reaper's reconcile of running flow jobs against their executions, on a timer when a test
 * asks for it (SVC_TEST_FLOW_RECONCILE_SECONDS; the stack runs it every 5 minutes).
 */
function startFlowReconcile(): void {
  const every = Number(process.env.SVC_TEST_FLOW_RECONCILE_SECONDS || 0);
  if (!every) return;
  const timer = setInterval(() => {
    import('../../functions/handlers/reaper.js')
      .then(({ reconcileFlows }) => reconcileFlows(0))
      .catch((error: unknown) => console.error(JSON.stringify({ level: 'error', msg: 'flow reconcile failed', error: String(error) })));
  }, every * 1000);
  cleanups.push(() => clearInterval(timer));
}

/** EventBridge's part: the maintenance function on its schedule (lib/constructs/maintenance.ts). */
function startSchedule(everyMs: number): void {
  const invoke = () =>
    import('../../functions/handlers/maintenance.js')
      .then(({ handler }) => handler())
      .catch((error) => console.error(JSON.stringify({ level: 'error', msg: 'maintenance failed', error: String(error) })));
  // Fire and forget, like a schedule: invoke() reports its own failures.
  const timer = setInterval(() => void invoke(), everyMs);
  cleanups.push(() => clearInterval(timer));
}

/**
 * The events function as the stack wires it (lib/constructs/events.ts): invoked by the table's
 * stream for each inserted outbox item, through the stream source that plays Lambda's mapping,
 * and every minute by its schedule.
 */
async function startEventsFunction(env: Record<string, string>): Promise<void> {
  const invoke = (event: DynamoDBStreamEvent | ScheduledEvent) => import('../../functions/handlers/events.js').then(({ handler }) => handler(event, lambdaContext('svc-events', 120_000)));
  const dynamo = dynamoClient(env.AWS_ENDPOINT_URL_DYNAMODB);
  const streams = streamsClient(env.AWS_ENDPOINT_URL_DYNAMODB);
  const source = await startStreamEventSource({
    dynamo,
    streams,
    tableName: env.TABLE_NAME,
    filters: EVENTS_STREAM_FILTERS,
    handler: async (event) => {
      await invoke(event);
    },
    // A failed batch is delivered again, as the mapping retries it (lib/constructs/events.ts).
    retryAttempts: 2,
    onError: (error) => console.error(JSON.stringify({ level: 'error', msg: 'events stream', error: String(error) })),
  });
  const unobserve = onDynamoWrite(() => source.wake());
  cleanups.push(async () => {
    unobserve();
    // Lambda's environment going away cuts an invocation short: one waiting out a webhook's
    // near retries (up to a minute) is not waited for.
    await source.stop({ abandon: true });
    dynamo.destroy();
    streams.destroy();
  });
  const timer = setInterval(() => {
    invoke({} as ScheduledEvent).catch((error: unknown) => console.error(JSON.stringify({ level: 'error', msg: 'events schedule failed', error: String(error) })));
  }, 60_000);
  cleanups.push(() => clearInterval(timer));
}

/**
 * The dependency builder function's part (lib/constructs/dependency-builder.ts): the api awaits
 * its resolutions and starts its builds without waiting, as Lambda's Event invocations would run
 * them; the real handler runs in this process, with npm and pip of this machine.
 */
async function useDependencyBuilderInProcess(): Promise<void> {
  const { useDependencyBuilder } = await import('../../functions/shells/aws.js');
  const { handler } = await import('../../functions/handlers/dependency-builder.js');
  useDependencyBuilder({
    resolve: async (ecosystem, requirements) => (await handler({ action: 'resolve', ecosystem, requirements })) as ResolveAnswer,
    startBuild: async (request) => {
      handler({ action: 'build', ...request }).catch((error: unknown) => console.error(JSON.stringify({ level: 'error', msg: 'dependency build failed', error: String(error) })));
    },
  });
}

/** The builder's /tmp and the sandboxes' fetched trees, removed with everything else. */
function dependencyDirs(sandboxDir: string): Record<string, string> {
  const buildDir = mkdtempSync(join(tmpdir(), 'svc-deps-build-'));
  // A test that looks at the sandboxes' trees names the directory (and removes it itself).
  const treesDir = process.env.SANDBOX_DEPS_DIR || `${sandboxDir}-deps`;
  cleanups.push(() => {
    rmSync(buildDir, { recursive: true, force: true });
    if (!process.env.SANDBOX_DEPS_DIR) rmSync(treesDir, { recursive: true, force: true });
  });
  return { DEPS_BUILD_DIR: buildDir, SANDBOX_DEPS_DIR: treesDir };
}

/** Where sandboxed code runs (the worker's jobs, the flow runner's expressions). */
function sandboxWorkDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sandbox-'));
  // Jobs run as another user when this runs as root: they must be able to enter it.
  chmodSync(dir, 0o711);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The worker side in its own process group, so stopping it reaches the sandbox processes it starts. */
function startEventSource(env: Record<string, string>, sandboxDir: string): ChildProcess {
  const child = spawn(process.execPath, EVENT_SOURCE_ARGS, {
    env: { ...env, SANDBOX_WORK_DIR: sandboxDir, WORKER_CONCURRENCY: env.SVC_WORKERS || '8' },
    // stdin stays open as the child's lifeline: it exits when this process is gone.
    stdio: ['pipe', 'inherit', 'inherit'],
    detached: true,
  });
  child.once('exit', (code, signal) => {
    if (!stopping) {
      console.error(`svc: the worker event source exited (${code ?? signal}); stopping`);
      void shutdown(1);
    }
  });
  return child;
}

async function stopProcessGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  signalGroup(child.pid, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
  // Whatever the worker left behind in its group (a Python sandbox handler) goes with it.
  signalGroup(child.pid, 'SIGKILL');
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  // Also keeps the event loop alive while emulators stop: the unref'd Java process would not.
  setTimeout(() => process.exit(code), 15_000);
  // In reverse: the server stops taking requests first, the data it served goes last.
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.error(JSON.stringify({ level: 'error', msg: 'cleanup failed', error: String(error) }));
    }
  }
  process.exit(code);
}

function listen(server: ReturnType<typeof createServer>, host: string, port: number): Promise<string> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => done(`http://${host}:${(server.address() as AddressInfo).port}`));
  });
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** When the starting process dies (a killed test run), this one is re-parented: then it stops. */
function watchParent(): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown(0);
  }, 500).unref();
}

process.once('SIGTERM', () => void shutdown(0));
process.once('SIGINT', () => void shutdown(0));
watchParent();
main().catch((error: unknown) => {
  console.error(`svc: ${error instanceof Error ? error.stack : String(error)}`);
  void shutdown(1);
});
