/**
 * The flow-runner state machine (docs/architecture.md "Flow runner"): one Standard execution per flow job,
 * the interpreter pattern. `Advance` asks the core (through the flow-runner function) for the next
 * action; the execution then only waits. Step Functions bills every state entered, and a Task
 * state cannot end the execution on some outputs only, so `Advance` ends it when it returns, and
 * hands every other outcome over by failing with a hand-over error (HAND_OVER) that its Catch
 * routes on:
 *
 * - `done` with success: Advance returns and the execution succeeds, its output what Advance
 *   answered (the steps it ran). Plain script steps in a row are run by Advance itself
 *   (functions/adapters/aws/inline-flow-steps.ts), no state per step: a flow of them is one billed
 *   transition;
 * - `run_step`: one script step too long for the time Advance has left (or with inline steps
 *   off): it is sent to the jobs queue with a task token (`sqs:sendMessage.waitForTaskToken`),
 *   which the worker completes when the job has finished;
 * - `run`: several steps at once, or a step that is itself a flow (sub-flow, branch, loop
 *   iteration), in a Map: script steps as above, flow steps as child executions of this same state
 *   machine. Advance hands over at most MAP_BATCH steps at a time (fewer when their names are
 *   long: a hand-over's Cause stays below 32 KB); the next turn lists the steps still queued;
 * - `wait`: the token of a waiting task is parked (`lambda:invoke.waitForTaskToken`) until a resume,
 *   cancel or step completion wakes the flow, or until the approval deadline (`TimeoutSecondsPath`);
 * - `continue`: the execution's history nears its 25,000 events, or its age the one-year limit of
 *   a Standard execution: the function has started the flow's next execution (continue-as-new,
 *   flow-execution-budget.ts), and this one ends in `Continued`;
 * - `done` failed or canceled: the execution ends in `Failed` or `Canceled`.
 *
 * A hand-over's Cause is the Lambda error `{"errorType","errorMessage","trace"}`, its message what
 * Advance answered (JSON: the console shows what the flow waits for); two Pass states per route
 * (`<target>Cause`, `<target>Turn`) parse it back into Advance's answer before the waiting state,
 * as a path cannot reach into an intrinsic function's result. So a turn that waits is four
 * transitions (Advance, the two Pass states, the waiting state), and a flow's end after a wait one
 * (Advance) or two (Advance and `Failed`, `Canceled` or `Continued`).
 *
 * Every wait ends in another `Advance`, whatever happened: the core re-reads the run and decides.
 * A timeout on any wait is therefore safe, and every wait has one of at most `wakeCheckSeconds`
 * (a day), so a lost wake costs at most that long and a long wait reaches Advance in time to
 * continue as a new execution. Kept free of CDK so the same definition is deployed (lib/) and
 * executed by the emulator in the tests.
 */

export interface FlowRunnerDefinitionProps {
  /** The flow-runner function (functions/handlers/flow-runner.ts). */
  readonly flowRunnerFunctionArn: string;
  /** The jobs queue the worker consumes. */
  readonly jobsQueueUrl: string;
  /** How long a script step may wait in the queue and run before the flow looks at it again. */
  readonly stepTimeoutSeconds: number;
  /** The longest any wait lasts before Advance looks again (WAKE_CHECK_SECONDS unless a test shortens it). */
  readonly wakeCheckSeconds?: number;
}

/** State names, for tests and the console. */
export const STATES = {
  advance: 'Advance',
  runScriptStep: 'RunScriptStep',
  runSteps: 'RunSteps',
  stepKind: 'StepKind',
  runBatchedScript: 'RunBatchedScript',
  runSubFlow: 'RunSubFlow',
  stepEnded: 'StepEnded',
  waitUntilDeadline: 'WaitUntilDeadline',
  waitForWake: 'WaitForWake',
  abandon: 'Abandon',
  failed: 'Failed',
  canceled: 'Canceled',
  runnerFailed: 'RunnerFailed',
  continued: 'Continued',
} as const;

/**
 * The errors by which Advance hands the execution over (the flow-runner function throws them,
 * functions/adapters/aws/flow-hand-over.ts), by what it answered; a successful flow needs none.
 */
export const HAND_OVER = {
  runStep: 'FlowRunStep',
  run: 'FlowRunSteps',
  waitUntilDeadline: 'FlowWaitUntilDeadline',
  waitForWake: 'FlowWaitForWake',
  continue: 'FlowContinue',
  failed: 'FlowFailed',
  canceled: 'FlowCanceled',
} as const;

/** The two Pass states that read a hand-over back into Advance's answer before `target`. */
export function handOverStates(target: string): { cause: string; turn: string } {
  return { cause: `${target}Cause`, turn: `${target}Turn` };
}

/**
 * Every wait, with or without a deadline, looks again at least this often: a lost wake costs no
 * more, and each look (about 15 history events) keeps a year of waiting near 5,500 events.
 */
export const WAKE_CHECK_SECONDS = 86_400;
/** The most steps one `run` action hands to the Map (about 10 history events and 300 bytes each). */
export const MAP_BATCH = 200;
/** The flow-runner function's timeout (lib/constructs/flow-runner.ts): Lambda's maximum, as Advance runs plain steps itself. */
export const FLOW_RUNNER_TIMEOUT_SECONDS = 900;

/** Lambda's transient errors, retried as AWS recommends for the lambda:invoke integration. */
const LAMBDA_RETRY = {
  ErrorEquals: ['Lambda.ServiceException', 'Lambda.AWSLambdaException', 'Lambda.SdkClientException', 'Lambda.TooManyRequestsException'],
  IntervalSeconds: 1,
  MaxAttempts: 6,
  BackoffRate: 2,
  JitterStrategy: 'FULL',
};

export function flowRunnerDefinition(props: FlowRunnerDefinitionProps): Record<string, unknown> {
  const flowIds = { 'workspaceId.$': '$.workspaceId', 'flowJobId.$': '$.flowJobId' };
  const wakeCheckSeconds = props.wakeCheckSeconds ?? WAKE_CHECK_SECONDS;
  // A script step's message; the worker completes the token once its job has finished.
  const sendScriptStep = (jobIdPath: string) => ({
    Type: 'Task',
    Resource: 'arn:aws:states:::sqs:sendMessage.waitForTaskToken',
    Parameters: {
      QueueUrl: props.jobsQueueUrl,
      MessageBody: { 'jobId.$': jobIdPath, 'workspaceId.$': '$.workspaceId', 'taskToken.$': '$$.Task.Token' },
      // The workspace as the message group, as SqsJobQueue sends it (SQS fair queues).
      'MessageGroupId.$': '$.workspaceId',
    },
    TimeoutSeconds: props.stepTimeoutSeconds,
    ResultPath: null,
  });
  const park = (extra: Record<string, unknown>) => ({
    Type: 'Task',
    Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
    Parameters: { FunctionName: props.flowRunnerFunctionArn, Payload: { op: 'park', ...flowIds, 'wakes.$': '$.wakes', 'taskToken.$': '$$.Task.Token' } },
    ...extra,
    // The output is the Advance output it was given: the next Advance reads the ids from it.
    ResultPath: null,
    Retry: [LAMBDA_RETRY],
    // A timeout is the deadline (or the periodic look); anything else is looked at again too.
    Catch: [
      { ErrorEquals: ['States.Timeout'], ResultPath: null, Next: STATES.advance },
      { ErrorEquals: ['States.ALL'], ResultPath: null, Next: STATES.advance },
    ],
    Next: STATES.advance,
  });

  const handOvers = Object.values(HAND_OVER);
  // The catcher's output is {Error, Cause}; Cause is the Lambda error's JSON, whose errorMessage is
  // Advance's answer as JSON: parsed once each, in two states (a path cannot follow an intrinsic).
  const readHandOver = (target: string) => {
    const names = handOverStates(target);
    return {
      [names.cause]: { Type: 'Pass', Parameters: { 'lambdaError.$': 'States.StringToJson($.Cause)' }, Next: names.turn },
      [names.turn]: { Type: 'Pass', Parameters: { 'turn.$': 'States.StringToJson($.lambdaError.errorMessage)' }, OutputPath: '$.turn', Next: target },
    };
  };

  return {
    Comment: 'svc flow runner: one execution per flow job; the core decides every step, this waits between them',
    StartAt: STATES.advance,
    States: {
      [STATES.advance]: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke',
        Parameters: {
          FunctionName: props.flowRunnerFunctionArn,
          // The history so far (as counted by the function) and the execution's name and start,
          // from which it decides when to continue as a new execution; the longest wait it may ask for.
          Payload: {
            op: 'advance',
            ...flowIds,
            'events.$': '$.events',
            'execution.$': '$$.Execution.Name',
            'startedAt.$': '$$.Execution.StartTime',
            wakeCheckSeconds,
          },
        },
        OutputPath: '$.Payload',
        TimeoutSeconds: FLOW_RUNNER_TIMEOUT_SECONDS,
        // A hand-over is an answer, not a failure: never retried. Its catcher comes before States.ALL's.
        Retry: [{ ErrorEquals: handOvers, MaxAttempts: 0 }, LAMBDA_RETRY, { ErrorEquals: ['States.ALL'], IntervalSeconds: 5, MaxAttempts: 5, BackoffRate: 2, MaxDelaySeconds: 120 }],
        Catch: [
          { ErrorEquals: [HAND_OVER.runStep], Next: handOverStates(STATES.runScriptStep).cause },
          { ErrorEquals: [HAND_OVER.run], Next: handOverStates(STATES.runSteps).cause },
          { ErrorEquals: [HAND_OVER.waitUntilDeadline], Next: handOverStates(STATES.waitUntilDeadline).cause },
          { ErrorEquals: [HAND_OVER.waitForWake], Next: handOverStates(STATES.waitForWake).cause },
          { ErrorEquals: [HAND_OVER.continue], Next: STATES.continued },
          { ErrorEquals: [HAND_OVER.failed], Next: STATES.failed },
          { ErrorEquals: [HAND_OVER.canceled], Next: STATES.canceled },
          // Still failing after its retries: the flow job is failed rather than left running.
          { ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: STATES.abandon },
        ],
        // Only a flow that succeeded returns: its execution ends here, one transition.
        End: true,
      },
      ...readHandOver(STATES.runScriptStep),
      ...readHandOver(STATES.runSteps),
      ...readHandOver(STATES.waitUntilDeadline),
      ...readHandOver(STATES.waitForWake),
      [STATES.runScriptStep]: {
        ...sendScriptStep('$.step.jobId'),
        // However the step ended, the next Advance finds out from the job itself.
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: null, Next: STATES.advance }],
        Next: STATES.advance,
      },
      [STATES.runSteps]: {
        Type: 'Map',
        ItemsPath: '$.steps',
        ItemSelector: {
          'workspaceId.$': '$.workspaceId',
          'jobId.$': '$$.Map.Item.Value.jobId',
          'kind.$': '$$.Map.Item.Value.kind',
          'executionName.$': '$$.Map.Item.Value.executionName',
        },
        MaxConcurrency: 0,
        ItemProcessor: {
          ProcessorConfig: { Mode: 'INLINE' },
          StartAt: STATES.stepKind,
          States: {
            [STATES.stepKind]: {
              Type: 'Choice',
              Choices: [{ Variable: '$.kind', StringEquals: 'flow', Next: STATES.runSubFlow }],
              Default: STATES.runBatchedScript,
            },
            [STATES.runBatchedScript]: {
              ...sendScriptStep('$.jobId'),
              Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: null, Next: STATES.stepEnded }],
              End: true,
            },
            [STATES.runSubFlow]: {
              Type: 'Task',
              Resource: 'arn:aws:states:::states:startExecution.sync:2',
              Parameters: {
                'StateMachineArn.$': '$$.StateMachine.Id',
                'Name.$': '$.executionName',
                Input: { 'workspaceId.$': '$.workspaceId', 'flowJobId.$': '$.jobId', events: 0, 'AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$': '$$.Execution.Id' },
              },
              // No timeout: a timed-out .sync task stops its child, and a sub-flow may wait for approvals.
              ResultPath: null,
              Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: null, Next: STATES.stepEnded }],
              End: true,
            },
            [STATES.stepEnded]: { Type: 'Pass', End: true },
          },
        },
        ResultPath: null,
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: null, Next: STATES.advance }],
        Next: STATES.advance,
      },
      [STATES.waitUntilDeadline]: park({ TimeoutSecondsPath: '$.timeoutSeconds' }),
      [STATES.waitForWake]: park({ TimeoutSeconds: wakeCheckSeconds }),
      [STATES.abandon]: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke',
        Parameters: { FunctionName: props.flowRunnerFunctionArn, Payload: { op: 'abandon', ...flowIds, 'cause.$': '$.failure.Cause' } },
        TimeoutSeconds: FLOW_RUNNER_TIMEOUT_SECONDS,
        Retry: [LAMBDA_RETRY],
        ResultPath: null,
        Next: STATES.runnerFailed,
      },
      // The flow goes on in the execution the function started; its job is still running.
      [STATES.continued]: { Type: 'Succeed', Comment: 'the flow continues in a new execution of the same job' },
      [STATES.failed]: { Type: 'Fail', Error: 'FlowFailed', Cause: 'the flow job failed: its result holds the error' },
      [STATES.canceled]: { Type: 'Fail', Error: 'FlowCanceled', Cause: 'the flow job was canceled' },
      [STATES.runnerFailed]: { Type: 'Fail', Error: 'FlowRunnerFailed', Cause: 'the flow runner could not advance the flow; the flow job was failed' },
    },
  };
}
