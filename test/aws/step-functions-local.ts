/**
 * Step Functions on loopback, for the aws tier: `aws-local-stepfunctions` executes the real
 * flow-runner definition (statemachines/flow-runner.ts) and this module serves the part of the
 * Step Functions API the handlers and tests call (StartExecution, SendTaskSuccess/Failure,
 * DescribeExecution, ListExecutions, GetExecutionHistory with the entered states) over the AWS
 * JSON 1.0 protocol, so the handlers' own SFN clients reach it through AWS_ENDPOINT_URL_SFN.
 *
 * The emulator runs Task states through local handlers, one per service integration the
 * definition uses, carried out as AWS does: `lambda:invoke` calls the named function (given
 * here as a local function), `.waitForTaskToken` tasks hand out a fresh token and wait until
 * SendTaskSuccess/Failure names it, `sqs:sendMessage` sends to the real (emulated) queue, and
 * `states:startExecution.sync:2` runs a child execution and waits for it.
 *
 * A function's error reaches the state machine as AWS reports it (Error: its type; Cause: the
 * runtime's error JSON), which the flow-runner definition parses back.
 *
 * Two quirks of the emulator are bridged, not hidden: it evaluates TimeoutSecondsPath against the
 * task's parameters instead of its input (so the parameters get a copy of that field), and
 * it gives a task without TimeoutSeconds 60 s where AWS waits without limit (such tasks get the
 * longest timer Node allows).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** Node 20 lacks it; the emulator uses it for every Task state (Node 22 has it). */
const withResolvers = <T>() => {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};
(Promise as unknown as { withResolvers?: unknown }).withResolvers ??= withResolvers;

const { StateMachine } = await import('aws-local-stepfunctions');

type Json = Record<string, unknown>;
/** A Lambda function's handler, by function ARN. */
export type LocalLambda = (payload: unknown) => Promise<unknown>;

export interface StepFunctionsLocalOptions {
  /** The state machine's definition (with its real ARNs and URLs in it). */
  definition: Json;
  /** The name in the state machine's ARN (the stack's `svc-<stage>-flow-runner`). */
  stateMachineName?: string;
  lambdas: Record<string, LocalLambda>;
  sqs: SQSClient;
  /**
   * EventBridge's part: called with the "Step Functions Execution Status Change" event of each
   * execution that ends, as AWS emits it (the stack's rule then filters on its status).
   */
  onStatusChange?: (event: ExecutionStatusChangeEvent) => void;
}

/** The EventBridge event Step Functions emits when an execution's status changes (the fields svc reads and a few more). */
export interface ExecutionStatusChangeEvent {
  version: '0';
  id: string;
  'detail-type': 'Step Functions Execution Status Change';
  source: 'aws.states';
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: {
    executionArn: string;
    stateMachineArn: string;
    name: string;
    status: ExecutionRecord['status'];
    startDate: number;
    stopDate: number | null;
    input: string;
    output: string | null;
    error: string | null;
    cause: string | null;
  };
}

export interface ExecutionRecord {
  executionArn: string;
  name: string;
  input: string;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED' | 'TIMED_OUT';
  output?: string;
  error?: string;
  cause?: string;
  startDate: Date;
  stopDate?: Date;
  /** The states entered, in order (Map iterations included), as GetExecutionHistory reports them. */
  history: Array<{ type: string; name: string; timestamp: Date; output?: string }>;
  done: Promise<void>;
  /** Ends the run now, as StopExecution or the execution's time limit does. */
  end?: (how: { status: 'ABORTED' | 'TIMED_OUT' | 'FAILED'; error?: string; cause?: string; quiet?: boolean }) => void;
}

export interface StepFunctionsLocal {
  endpoint: string;
  stateMachineArn: string;
  executions: Map<string, ExecutionRecord>;
  /** Task tokens waiting for SendTaskSuccess/Failure now. */
  pendingTokens(): number;
  stop(): Promise<void>;
}

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';
/** setTimeout's longest delay, in whole seconds. */
const LONGEST_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);
const TOKEN_PLACEHOLDER = '$$TASK_TOKEN$$';

class SfnError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = type;
  }
}

export async function startStepFunctionsLocal(opts: StepFunctionsLocalOptions): Promise<StepFunctionsLocal> {
  const name = opts.stateMachineName ?? 'svc-local-flow-runner';
  const stateMachineArn = `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`;
  const definition = emulatorDefinition(opts.definition);
  const machine = new StateMachine(definition as never, { validationOptions: { checkArn: true, checkPaths: true } });
  const executions = new Map<string, ExecutionRecord>();
  const tokens = new Map<string, { resolve: (output: unknown) => void; reject: (error: Error) => void }>();

  const waitForToken = (token: string): Promise<unknown> =>
    new Promise((resolve, reject) => {
      tokens.set(token, { resolve, reject });
    });

  const lambda = (arn: unknown): LocalLambda => {
    const fn = typeof arn === 'string' ? opts.lambdas[arn] : undefined;
    if (!fn) throw new SfnError('Lambda.ResourceNotFoundException', `no local function ${String(arn)}`);
    return async (payload) => {
      try {
        return await fn(payload);
      } catch (error) {
        throw functionError(error);
      }
    };
  };

  /** Each integration the definition uses, carried out as Step Functions does it. */
  const integrations: Record<string, (input: Json) => Promise<unknown>> = {
    'arn:aws:states:::lambda:invoke': async (input) => ({ StatusCode: 200, Payload: await lambda(input.FunctionName)(input.Payload) }),
    'arn:aws:states:::lambda:invoke.waitForTaskToken': async (input) => {
      const token = newToken();
      const waiting = waitForToken(token);
      await lambda(input.FunctionName)(withToken(input.Payload, token));
      return waiting;
    },
    'arn:aws:states:::sqs:sendMessage.waitForTaskToken': async (input) => {
      const token = newToken();
      const waiting = waitForToken(token);
      await opts.sqs.send(new SendMessageCommand({ QueueUrl: String(input.QueueUrl), MessageBody: JSON.stringify(withToken(input.MessageBody, token)) }));
      return waiting;
    },
    'arn:aws:states:::states:startExecution.sync:2': async (input) => {
      const child = startExecution(String(input.StateMachineArn), String(input.Name), JSON.stringify(input.Input ?? {}));
      await child.done;
      if (child.status !== 'SUCCEEDED') throw new SfnError('States.TaskFailed', `child execution ${child.name} ${child.status}: ${child.error ?? ''}`);
      return { ExecutionArn: child.executionArn, Status: child.status, Output: JSON.parse(child.output ?? 'null') };
    },
  };
  const taskHandlers = Object.fromEntries(
    taskStates(definition).map(([stateName, resource]) => {
      const integration = integrations[resource];
      if (!integration) throw new Error(`the emulator does not carry out ${resource} (state ${stateName})`);
      return [stateName, integration];
    }),
  );

  function startExecution(smArn: string, executionName: string, input: string): ExecutionRecord {
    if (smArn !== stateMachineArn) throw new SfnError('StateMachineDoesNotExist', `no state machine ${smArn}`);
    const executionArn = `arn:aws:states:${REGION}:${ACCOUNT}:execution:${name}:${executionName}`;
    const existing = executions.get(executionArn);
    if (existing) {
      // As AWS: the same name and input while it runs is the same execution; anything else a conflict.
      if (existing.status === 'RUNNING' && existing.input === input) return existing;
      throw new SfnError('ExecutionAlreadyExists', `execution ${executionName} already exists`);
    }
    if (!/^[A-Za-z0-9_.-]{1,80}$/.test(executionName)) throw new SfnError('InvalidName', `invalid execution name ${executionName}`);
    const record: ExecutionRecord = { executionArn, name: executionName, input, status: 'RUNNING', startDate: new Date(), history: [], done: Promise.resolve() };
    const context = {
      Execution: { Id: executionArn, Name: executionName, Input: JSON.parse(input), StartTime: record.startDate.toISOString() },
      StateMachine: { Id: stateMachineArn, Name: name },
      Task: { Token: TOKEN_PLACEHOLDER },
    };
    const run = machine.run(JSON.parse(input), { context, overrides: { taskResourceLocalHandlers: taskHandlers as never } });
    let ending: Parameters<NonNullable<ExecutionRecord['end']>>[0] | undefined;
    record.end = (how) => {
      if (record.status !== 'RUNNING' || ending) return;
      ending = how;
      run.abort();
    };
    void (async () => {
      for await (const event of run.eventLogs) {
        const entered = event as { type: string; timestamp: number; state?: { name: string; type: string } };
        if (entered.type === 'StateEntered' && entered.state) {
          record.history.push({ type: `${entered.state.type}StateEntered`, name: entered.state.name, timestamp: new Date(entered.timestamp) });
        }
        // A task's exit, with its output as the console shows it (what Advance ran, say).
        if (entered.type === 'StateExited' && entered.state?.type === 'Task') {
          const { output } = entered.state as { output?: unknown };
          record.history.push({ type: 'TaskStateExited', name: entered.state.name, timestamp: new Date(entered.timestamp), output: JSON.stringify(output ?? null) });
        }
      }
    })().catch(() => undefined);
    record.done = run.result.then(
      (output: unknown) => {
        record.status = 'SUCCEEDED';
        record.output = JSON.stringify(output ?? null);
      },
      (error: Error & { cause?: { name?: string; message?: string } }) => {
        if (ending) {
          record.status = ending.status;
          record.error = ending.error;
          record.cause = ending.cause;
          return;
        }
        record.status = 'FAILED';
        // A Fail state's Error and Cause, or the error that ended the execution.
        record.error = error.cause?.name ?? error.name;
        record.cause = error.cause?.message ?? error.message;
      },
    ).finally(() => {
      record.stopDate = new Date();
      if (!ending?.quiet) opts.onStatusChange?.(statusChangeEvent(record, stateMachineArn));
    });
    executions.set(executionArn, record);
    return record;
  }

  const operations: Record<string, (body: Json) => Promise<Json> | Json> = {
    StartExecution: (body) => {
      const record = startExecution(String(body.stateMachineArn), String(body.name ?? randomBytes(8).toString('hex')), String(body.input ?? '{}'));
      return { executionArn: record.executionArn, startDate: record.startDate.getTime() / 1000 };
    },
    SendTaskSuccess: (body) => {
      settle(String(body.taskToken)).resolve(JSON.parse(String(body.output ?? '{}')));
      return {};
    },
    SendTaskFailure: (body) => {
      const error = new SfnError(String(body.error ?? 'States.TaskFailed'), String(body.cause ?? ''));
      settle(String(body.taskToken)).reject(error);
      return {};
    },
    StopExecution: (body) => {
      const record = executions.get(String(body.executionArn));
      if (!record) throw new SfnError('ExecutionDoesNotExist', `no execution ${String(body.executionArn)}`);
      record.end?.({ status: 'ABORTED', ...(body.error ? { error: String(body.error) } : {}), ...(body.cause ? { cause: String(body.cause) } : {}) });
      return { stopDate: Date.now() / 1000 };
    },
    // Not AWS: the tests' way to end an execution as AWS would on its own, when its time limit
    // passes (TIMED_OUT) or a state fails with nothing to catch it (FAILED: the runner's Abandon
    // failing). `quiet` keeps its status change event from EventBridge, as if it were lost.
    'SvcTest.EndExecution': (body) => {
      const record = executions.get(String(body.executionArn));
      if (!record) throw new SfnError('ExecutionDoesNotExist', `no execution ${String(body.executionArn)}`);
      const status = String(body.status);
      if (status !== 'TIMED_OUT' && status !== 'FAILED') throw new SfnError('ValidationException', `an execution ends as TIMED_OUT or FAILED, not ${status}`);
      record.end?.({ status, error: String(body.error ?? (status === 'TIMED_OUT' ? 'States.Timeout' : 'States.Runtime')), cause: String(body.cause ?? ''), quiet: body.quiet === true });
      return {};
    },
    DescribeExecution: (body) => {
      const record = executions.get(String(body.executionArn));
      if (!record) throw new SfnError('ExecutionDoesNotExist', `no execution ${String(body.executionArn)}`);
      return describe(record);
    },
    GetExecutionHistory: (body) => {
      const record = executions.get(String(body.executionArn));
      if (!record) throw new SfnError('ExecutionDoesNotExist', `no execution ${String(body.executionArn)}`);
      return {
        events: record.history.map((e, i) => ({
          id: i + 1,
          timestamp: e.timestamp.getTime() / 1000,
          type: e.type,
          ...(e.type.endsWith('StateExited') ? { stateExitedEventDetails: { name: e.name, output: e.output } } : { stateEnteredEventDetails: { name: e.name } }),
        })),
      };
    },
    ListExecutions: (body) => ({
      executions: [...executions.values()].filter((e) => !body.statusFilter || e.status === body.statusFilter).map(describe),
    }),
  };

  function settle(token: string) {
    const waiter = tokens.get(token);
    if (!waiter) throw new SfnError(token.startsWith('tok-') ? 'TaskDoesNotExist' : 'InvalidToken', 'no task waits for this token');
    tokens.delete(token);
    return waiter;
  }

  function describe(record: ExecutionRecord): Json {
    return {
      executionArn: record.executionArn,
      stateMachineArn,
      name: record.name,
      status: record.status,
      input: record.input,
      output: record.output,
      error: record.error,
      cause: record.cause,
      startDate: record.startDate.getTime() / 1000,
      stopDate: record.stopDate ? record.stopDate.getTime() / 1000 : undefined,
    };
  }

  const server = createServer((req, res) => void serve(req, res));
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const op = String(req.headers['x-amz-target'] ?? '').replace(/^AWSStepFunctions\./, '');
    try {
      const handler = operations[op];
      if (!handler) throw new SfnError('UnknownOperationException', `the emulator does not serve ${op}`);
      const body = await handler(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json);
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify(body));
    } catch (error) {
      const type = error instanceof SfnError ? error.type : 'InternalFailure';
      res.writeHead(error instanceof SfnError ? 400 : 500, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify({ __type: type, message: (error as Error).message }));
    }
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    endpoint,
    stateMachineArn,
    executions,
    pendingTokens: () => tokens.size,
    async stop() {
      for (const waiter of tokens.values()) waiter.reject(new SfnError('States.Runtime', 'the emulator stopped'));
      tokens.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function statusChangeEvent(record: ExecutionRecord, stateMachineArn: string): ExecutionStatusChangeEvent {
  return {
    version: '0',
    id: randomBytes(16).toString('hex'),
    'detail-type': 'Step Functions Execution Status Change',
    source: 'aws.states',
    account: ACCOUNT,
    time: (record.stopDate ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: REGION,
    resources: [record.executionArn],
    detail: {
      executionArn: record.executionArn,
      stateMachineArn,
      name: record.name,
      status: record.status,
      startDate: record.startDate.getTime(),
      stopDate: record.stopDate?.getTime() ?? null,
      input: record.input,
      output: record.output ?? null,
      error: record.error ?? null,
      cause: record.cause ?? null,
    },
  };
}

/**
 * A function error as the lambda:invoke integration reports it: the error's name is the task's
 * Error, and its Cause the function's error payload as the Node runtime writes it (errorType,
 * errorMessage, and the stack's lines as trace), JSON, at most 32,768 characters as AWS keeps.
 */
function functionError(error: unknown): SfnError {
  const e = error instanceof Error ? error : new Error(String(error));
  if (e instanceof SfnError) return e;
  const cause = JSON.stringify({ errorType: e.name, errorMessage: e.message, trace: (e.stack ?? '').split('\n') });
  return new SfnError(e.name, cause.slice(0, 32_768));
}

function newToken(): string {
  return `tok-${randomBytes(24).toString('base64url')}`;
}

function withToken(value: unknown, token: string): unknown {
  return JSON.parse(JSON.stringify(value ?? null).replaceAll(JSON.stringify(TOKEN_PLACEHOLDER).slice(1, -1), token));
}

/** Every Task state, Map iterations included, with its Resource. */
function taskStates(definition: Json): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  for (const [stateName, state] of Object.entries(definition.States as Record<string, Json>)) {
    if (state.Type === 'Task') found.push([stateName, String(state.Resource)]);
    const inner = (state.ItemProcessor ?? state.Iterator) as Json | undefined;
    if (inner) found.push(...taskStates(inner));
  }
  return found;
}

/** The definition with the emulator's two quirks bridged (see the top of this file). */
function emulatorDefinition(definition: Json): Json {
  const copy = structuredClone(definition);
  const visit = (machine: Json) => {
    for (const state of Object.values(machine.States as Record<string, Json>)) {
      if (state.Type === 'Task') {
        // The emulator reads TimeoutSecondsPath from the parameters: they get it, under the same path.
        const path = state.TimeoutSecondsPath;
        const field = typeof path === 'string' ? /^\$\.([A-Za-z0-9_]+)$/.exec(path)?.[1] : undefined;
        if (typeof path === 'string' && !field) throw new Error(`the emulator bridge handles TimeoutSecondsPath $.<field> only, not ${path}`);
        if (field) state.Parameters = { ...(state.Parameters as Json), [`${field}.$`]: path };
        if (state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) state.TimeoutSeconds = LONGEST_TIMER_SECONDS;
      }
      const inner = (state.ItemProcessor ?? state.Iterator) as Json | undefined;
      if (inner) visit(inner);
    }
  };
  visit(copy);
  return copy;
}
