/**
 * The flow-runner state machine (docs/architecture.md "Flow runner"): one Standard execution per flow job,
 * the interpreter pattern. `Advance` asks the core (through the flow-runner function) for the next
 * action; the execution then only waits:
 *
 * - `run`: each step job is sent to the jobs queue with a task token (`sqs:sendMessage.waitForTaskToken`),
 *   which the worker completes when the job has finished; a step that is itself a flow (sub-flow,
 *   branch, loop iteration) runs as a child execution of this same state machine;
 * - `wait`: the token of a waiting task is parked (`lambda:invoke.waitForTaskToken`) until a resume,
 *   cancel or step completion wakes the flow, or until the approval deadline (`TimeoutSecondsPath`);
 * - `done`: the flow job is finished; the execution ends as it did.
 *
 * Every wait ends in another `Advance`, whatever happened: the core re-reads the run and decides.
 * A timeout on any wait is therefore safe, and the waits without a deadline have one anyway, so a
 * lost wake costs at most that long. Kept free of CDK so the same definition is deployed (lib/) and
 * executed by the emulator in the tests.
 */

export interface FlowRunnerDefinitionProps {
  /** The flow-runner function (functions/handlers/flow-runner.ts). */
  readonly flowRunnerFunctionArn: string;
  /** The jobs queue the worker consumes. */
  readonly jobsQueueUrl: string;
  /** How long a script step may wait in the queue and run before the flow looks at it again. */
  readonly stepTimeoutSeconds: number;
}

/** State names, for tests and the console. */
export const STATES = {
  advance: 'Advance',
  route: 'Route',
  runSteps: 'RunSteps',
  stepKind: 'StepKind',
  runScriptStep: 'RunScriptStep',
  runSubFlow: 'RunSubFlow',
  stepEnded: 'StepEnded',
  waitUntilDeadline: 'WaitUntilDeadline',
  waitForWake: 'WaitForWake',
  abandon: 'Abandon',
  succeeded: 'Succeeded',
  failed: 'Failed',
  canceled: 'Canceled',
  runnerFailed: 'RunnerFailed',
} as const;

/** A flow waiting with no deadline looks again this often, in case a wake was lost. */
export const WAKE_CHECK_SECONDS = 3600;
/** The flow-runner function's timeout (lib/constructs/flow-runner.ts). */
export const FLOW_RUNNER_TIMEOUT_SECONDS = 300;

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

  return {
    Comment: 'svc flow runner: one execution per flow job; the core decides every step, this waits between them',
    StartAt: STATES.advance,
    States: {
      [STATES.advance]: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke',
        Parameters: { FunctionName: props.flowRunnerFunctionArn, Payload: { op: 'advance', ...flowIds } },
        OutputPath: '$.Payload',
        TimeoutSeconds: FLOW_RUNNER_TIMEOUT_SECONDS,
        Retry: [LAMBDA_RETRY, { ErrorEquals: ['States.ALL'], IntervalSeconds: 5, MaxAttempts: 5, BackoffRate: 2, MaxDelaySeconds: 120 }],
        // Still failing after its retries: the flow job is failed rather than left running.
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: STATES.abandon }],
        Next: STATES.route,
      },
      [STATES.route]: {
        Type: 'Choice',
        Choices: [
          { Variable: '$.action', StringEquals: 'run', Next: STATES.runSteps },
          { And: [{ Variable: '$.action', StringEquals: 'wait' }, { Variable: '$.timeoutSeconds', IsPresent: true }], Next: STATES.waitUntilDeadline },
          { Variable: '$.action', StringEquals: 'wait', Next: STATES.waitForWake },
          { Variable: '$.status', StringEquals: 'success', Next: STATES.succeeded },
          { Variable: '$.status', StringEquals: 'canceled', Next: STATES.canceled },
        ],
        Default: STATES.failed,
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
              Default: STATES.runScriptStep,
            },
            [STATES.runScriptStep]: {
              Type: 'Task',
              Resource: 'arn:aws:states:::sqs:sendMessage.waitForTaskToken',
              Parameters: {
                QueueUrl: props.jobsQueueUrl,
                MessageBody: { 'jobId.$': '$.jobId', 'workspaceId.$': '$.workspaceId', 'taskToken.$': '$$.Task.Token' },
              },
              TimeoutSeconds: props.stepTimeoutSeconds,
              ResultPath: null,
              // However the step ended, the next Advance finds out from the job itself.
              Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: null, Next: STATES.stepEnded }],
              End: true,
            },
            [STATES.runSubFlow]: {
              Type: 'Task',
              Resource: 'arn:aws:states:::states:startExecution.sync:2',
              Parameters: {
                'StateMachineArn.$': '$$.StateMachine.Id',
                'Name.$': '$.executionName',
                Input: { 'workspaceId.$': '$.workspaceId', 'flowJobId.$': '$.jobId', 'AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$': '$$.Execution.Id' },
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
      [STATES.waitForWake]: park({ TimeoutSeconds: WAKE_CHECK_SECONDS }),
      [STATES.abandon]: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke',
        Parameters: { FunctionName: props.flowRunnerFunctionArn, Payload: { op: 'abandon', ...flowIds, 'cause.$': '$.failure.Cause' } },
        TimeoutSeconds: FLOW_RUNNER_TIMEOUT_SECONDS,
        Retry: [LAMBDA_RETRY],
        ResultPath: null,
        Next: STATES.runnerFailed,
      },
      [STATES.succeeded]: { Type: 'Succeed' },
      [STATES.failed]: { Type: 'Fail', Error: 'FlowFailed', Cause: 'the flow job failed: its result holds the error' },
      [STATES.canceled]: { Type: 'Fail', Error: 'FlowCanceled', Cause: 'the flow job was canceled' },
      [STATES.runnerFailed]: { Type: 'Fail', Error: 'FlowRunnerFailed', Cause: 'the flow runner could not advance the flow; the flow job was failed' },
    },
  };
}
