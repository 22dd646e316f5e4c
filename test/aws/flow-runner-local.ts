import type { SQSClient } from '@aws-sdk/client-sqs';
import { flowRunnerDefinition } from '../../statemachines/flow-runner.js';
import { startStepFunctionsLocal, type ExecutionStatusChangeEvent, type LocalLambda, type StepFunctionsLocal } from './step-functions-local.js';

/** The flow-runner function's ARN in the emulated account. */
export const FLOW_RUNNER_FUNCTION_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:svc-local-flow-runner';

export interface FlowRunnerLocal extends StepFunctionsLocal {
  /** What points the handlers' SFN clients and config at it. */
  env: { AWS_ENDPOINT_URL_SFN: string; STATE_MACHINE_ARN: string };
}

/**
 * The flow-runner state machine as the stack deploys it (statemachines/flow-runner.ts), executed by
 * the Step Functions emulator, its Lambda tasks calling `flowRunner` (the real handler, in this
 * process) and its step messages going to the emulated jobs queue.
 */
export async function startFlowRunnerLocal(opts: { sqs: SQSClient; queueUrl: string; flowRunner: LocalLambda; stepTimeoutSeconds: number; wakeCheckSeconds?: number; onStatusChange?: (event: ExecutionStatusChangeEvent) => void }): Promise<FlowRunnerLocal> {
  const definition = flowRunnerDefinition({ flowRunnerFunctionArn: FLOW_RUNNER_FUNCTION_ARN, jobsQueueUrl: opts.queueUrl, stepTimeoutSeconds: opts.stepTimeoutSeconds, wakeCheckSeconds: opts.wakeCheckSeconds });
  const sfn = await startStepFunctionsLocal({ definition, lambdas: { [FLOW_RUNNER_FUNCTION_ARN]: opts.flowRunner }, sqs: opts.sqs, onStatusChange: opts.onStatusChange });
  return { ...sfn, env: { AWS_ENDPOINT_URL_SFN: sfn.endpoint, STATE_MACHINE_ARN: sfn.stateMachineArn } };
}
