import { LambdaClient } from '@aws-sdk/client-lambda';
import { z } from 'zod';
import type { WorkerDeps } from '../core/deps.js';
import { abandonFlow, advanceForRunner, type RunnerAction } from '../core/flows/runner-action.js';
import { requireSandboxFunctions } from '../adapters/aws/aws-config.js';
import { createLambdaSandboxRunner, lambdaInvoke } from '../adapters/aws/lambda-sandbox-runner.js';
import type { SandboxInvoke } from '../adapters/aws/sandbox-protocol.js';
import { executionName } from '../adapters/aws/step-functions-flow-runner.js';
import { awsShell, once, type AwsShell } from './aws-deps.js';

/**
 * The flow-runner Lambda, called by the flow-runner state machine (statemachines/flow-runner.ts):
 * `advance` runs one turn of the core's interpreter and answers what the execution does next;
 * `park` keeps the token of the state that waits to be woken; `abandon` fails a flow that Advance
 * could not take further even after its retries. Expressions of the flow run in the
 * sandbox function, like the worker's jobs.
 */

const advanceEvent = z.object({ op: z.literal('advance'), workspaceId: z.string().min(1), flowJobId: z.string().min(1) });
const parkEvent = z.object({ op: z.literal('park'), workspaceId: z.string().min(1), flowJobId: z.string().min(1), wakes: z.number().int().min(0), taskToken: z.string().min(1) });
const abandonEvent = z.object({ op: z.literal('abandon'), workspaceId: z.string().min(1), flowJobId: z.string().min(1), cause: z.string().default('') });
const event = z.discriminatedUnion('op', [advanceEvent, parkEvent, abandonEvent]);

export type FlowRunnerEvent = z.input<typeof event>;

/** What Advance answers: the execution's state from here on (the state machine routes on `action`). */
export type AdvanceOutput = { workspaceId: string; flowJobId: string; wakes: number } & (
  | Exclude<RunnerAction, { action: 'run' }>
  | { action: 'run'; steps: Array<Extract<RunnerAction, { action: 'run' }>['steps'][number] & { executionName: string }> }
);

export function createFlowRunnerHandler(sandboxInvoker: (shell: AwsShell) => SandboxInvoke) {
  const runner = once(async (): Promise<{ deps: WorkerDeps; shell: AwsShell }> => {
    const shell = await awsShell();
    return { shell, deps: { ...shell.deps, runner: createLambdaSandboxRunner(sandboxInvoker(shell)) } };
  });

  return async (input: unknown): Promise<AdvanceOutput | Record<string, never>> => {
    const parsed = event.safeParse(input);
    // A malformed event is a bug in the state machine: fail the task loudly, change nothing.
    if (!parsed.success) throw new Error(`flow-runner: malformed event: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const { deps, shell } = await runner();
    const e = parsed.data;
    if (e.op === 'park') {
      await shell.flowRunner.park(e.workspaceId, e.flowJobId, e.taskToken, e.wakes);
      return {};
    }
    if (e.op === 'abandon') {
      await abandonFlow(deps, e.workspaceId, e.flowJobId, e.cause);
      await shell.flowRunner.endRun(e.workspaceId, e.flowJobId);
      return {};
    }
    const wakes = await shell.flowRunner.beginTurn(e.workspaceId, e.flowJobId);
    const next = await advanceForRunner(deps, e.workspaceId, e.flowJobId);
    const base = { workspaceId: e.workspaceId, flowJobId: e.flowJobId, wakes };
    if (next.action === 'done') await shell.flowRunner.endRun(e.workspaceId, e.flowJobId);
    if (next.action !== 'run') return { ...base, ...next };
    return { ...base, action: 'run', steps: next.steps.map((s) => ({ ...s, executionName: executionName(s.path, s.jobId) })) };
  };
}

/** On AWS, flow expressions run in the Node sandbox function, whose role has no permissions. */
export const handler = createFlowRunnerHandler((shell) => lambdaInvoke(new LambdaClient({}), requireSandboxFunctions(shell.config), { tenantPerWorkspace: true }));
