import { DescribeExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { z } from 'zod';
import { EXECUTION_ENDS, type ExecutionLookup, type ExecutionOutcome } from '../../core/flows/stranded.js';
import type { Job } from '../../ports.js';
import { continuationOf } from './flow-execution-budget.js';
import { executionName } from './step-functions-flow-runner.js';

/**
 * How a flow job's executions stand, for the rules of core/flows/stranded.ts: the EventBridge
 * "Step Functions Execution Status Change" event of an execution that ended badly, and a look at
 * a job's latest execution (DescribeExecution) for the periodic reconcile.
 */

/** The detail type and statuses of the stack's rule (lib/constructs/job-delivery.ts). */
export const EXECUTION_STATUS_CHANGE = 'Step Functions Execution Status Change';

const statusChange = z.object({
  source: z.literal('aws.states'),
  'detail-type': z.literal(EXECUTION_STATUS_CHANGE),
  detail: z.object({
    executionArn: z.string().min(1),
    stateMachineArn: z.string().min(1),
    name: z.string().min(1),
    status: z.enum(EXECUTION_ENDS as [ExecutionOutcome['status'], ...ExecutionOutcome['status'][]]),
    // The execution's input, as a JSON string (absent when the event would pass 256 KB; ours are tiny).
    input: z.string().nullish(),
    error: z.string().nullish(),
    cause: z.string().nullish(),
  }),
});
const executionInput = z.object({ workspaceId: z.string().min(1), flowJobId: z.string().min(1) });

export interface EndedExecution {
  workspaceId: string;
  flowJobId: string;
  stateMachineArn: string;
  outcome: ExecutionOutcome;
}

/** Whether `event` is an execution status change (the reaper function gets its schedule's events too). */
export function isExecutionStatusChange(event: unknown): boolean {
  return (event as { 'detail-type'?: unknown } | null)?.['detail-type'] === EXECUTION_STATUS_CHANGE;
}

/**
 * The flow job an ended execution ran, from the event EventBridge delivers. Null for an event
 * that is not one of ours (another state machine's input, a status the rule should not pass).
 */
export function endedExecution(event: unknown): EndedExecution | null {
  const parsed = statusChange.safeParse(event);
  if (!parsed.success || !parsed.data.detail.input) return null;
  let input: unknown;
  try {
    input = JSON.parse(parsed.data.detail.input);
  } catch {
    return null;
  }
  const ids = executionInput.safeParse(input);
  if (!ids.success) return null;
  const { detail } = parsed.data;
  return { ...ids.data, stateMachineArn: detail.stateMachineArn, outcome: { status: detail.status, execution: detail.name, error: detail.error, cause: detail.cause } };
}

/** An execution's ARN from its state machine's and its name. */
export function executionArn(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

type Described = { status?: string; error?: string; cause?: string; name?: string };

async function describe(client: SFNClient, stateMachineArn: string, name: string): Promise<Described | null> {
  try {
    return await client.send(new DescribeExecutionCommand({ executionArn: executionArn(stateMachineArn, name) }));
  } catch (e) {
    if ((e as Error).name === 'ExecutionDoesNotExist') return null;
    throw e;
  }
}

/**
 * Whether the flow went on in a later execution (continue-as-new): an earlier one's end then
 * says nothing about the job.
 */
export async function supersededBy(client: SFNClient, stateMachineArn: string, job: Pick<Job, 'id' | 'script_path'>, name: string): Promise<boolean> {
  return (await describe(client, stateMachineArn, executionName(job.script_path, job.id, continuationOf(name) + 1))) !== null;
}

/**
 * The reconcile's look at a flow job: its latest execution (`<name>`, `<name>.c1`, ... as it
 * continued), and how it ended if it did. A job with no execution yet is left alone.
 */
export function executionLookup(client: SFNClient, stateMachineArn: string): ExecutionLookup {
  return async (job) => {
    let latest: Described | null = null;
    for (let continuation = 0; ; continuation++) {
      const found = await describe(client, stateMachineArn, executionName(job.script_path, job.id, continuation));
      if (!found) break;
      latest = found;
    }
    if (!latest) return null;
    const status = latest.status as ExecutionOutcome['status'];
    if (!EXECUTION_ENDS.includes(status)) return 'running';
    return { status, execution: latest.name ?? executionName(job.script_path, job.id), error: latest.error, cause: latest.cause };
  };
}
