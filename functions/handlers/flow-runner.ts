import { LambdaClient } from '@aws-sdk/client-lambda';
import type { Context } from 'aws-lambda';
import { z } from 'zod';
import type { WorkerDeps } from '../core/deps.js';
import { abandonFlow, advanceForRunner } from '../core/flows/runner-action.js';
import { requireSandboxFunctions } from '../adapters/aws/aws-config.js';
import { lambdaInvoke } from '../adapters/aws/lambda-sandbox-runner.js';
import type { SandboxInvoke } from '../adapters/aws/sandbox-protocol.js';
import { continuationOf, eventsOfTurn, shouldContinue, type ExecutionBudget } from '../adapters/aws/flow-execution-budget.js';
import { turnAction, type TurnAction } from '../adapters/aws/flow-turn-action.js';
import { InlineSteps, leaseEndsInSeconds, runHeldStep, runningScriptSteps, runStepInline, type InlineStep } from '../adapters/aws/inline-flow-steps.js';
import { FLOW_RUNNER_TIMEOUT_SECONDS } from '../../statemachines/flow-runner.js';
import { countApprovalWait, countHandOver } from '../adapters/aws/powertools.js';
import { handOver, readableCause } from '../adapters/aws/flow-hand-over.js';
import { cacheJobLimitsFor } from '../adapters/aws/dynamo-entities.js';
import { awsShell, once, traced, type AwsShell } from '../shells/aws.js';

/**
 * The flow-runner Lambda, called by the flow-runner state machine (statemachines/flow-runner.ts):
 * `advance` runs turns of the core's interpreter, running plain script steps itself while they fit
 * in the invocation (inline-flow-steps.ts), and answers what the execution does next
 * (or, when the execution's history or age budget is spent, starts the flow's next execution):
 * it returns when the flow succeeded, and otherwise throws the hand-over error the state machine
 * routes on (flow-hand-over.ts), counted (FlowHandOvers) so the stack's errors alarm leaves it out;
 * `park` keeps the token of the state that waits to be woken; `abandon` fails a flow that Advance
 * could not take further even after its retries. Expressions of the flow run in the
 * sandbox function, like the worker's jobs.
 */

const advanceEvent = z.object({
  op: z.literal('advance'),
  workspaceId: z.string().min(1),
  flowJobId: z.string().min(1),
  events: z.number().int().min(0),
  execution: z.string().min(1),
  startedAt: z.string().min(1),
  wakeCheckSeconds: z.number().int().min(1),
});
const parkEvent = z.object({ op: z.literal('park'), workspaceId: z.string().min(1), flowJobId: z.string().min(1), wakes: z.number().int().min(0), taskToken: z.string().min(1) });
const abandonEvent = z.object({ op: z.literal('abandon'), workspaceId: z.string().min(1), flowJobId: z.string().min(1), cause: z.string().default('') });
const event = z.discriminatedUnion('op', [advanceEvent, parkEvent, abandonEvent]);

export type FlowRunnerEvent = z.input<typeof event>;

/**
 * What Advance answers: the execution's state from here on (the state machine routes on `action`,
 * flow-turn-action.ts), with the history events counted so far.
 */
export type AdvanceOutput = { workspaceId: string; flowJobId: string; wakes: number; events: number; ran?: InlineStep[]; ranCount?: number } & (TurnAction | { action: 'continue' });

/** The most inline steps Advance's output names (the rest are counted): the state stays small. */
const RAN_LISTED = 50;

/** The steps this Advance ran itself, for the console: the last RAN_LISTED named, all counted. */
function ranOutput(ran: InlineStep[]): { ran?: InlineStep[]; ranCount?: number } {
  return ran.length === 0 ? {} : { ran: ran.slice(-RAN_LISTED), ranCount: ran.length };
}

export interface FlowRunnerHandlerOptions {
  /** When an execution hands over to a new one (flow-execution-budget.ts defaults; tests shorten them). */
  budget?: ExecutionBudget;
  /** Run plain script steps inside Advance (inline-flow-steps.ts); FLOW_INLINE_STEPS=true when not given. */
  inlineSteps?: boolean;
}

/** How stale the workspace's job limits may be in a warm flow runner (docs/aws.md "Costs"): read once per 10 s, not once per step. */
export const JOB_LIMITS_CACHE_MS = 10_000;

export function createFlowRunnerHandler(sandboxInvoker: (shell: AwsShell) => SandboxInvoke, opts: FlowRunnerHandlerOptions = {}) {
  cacheJobLimitsFor(JOB_LIMITS_CACHE_MS);
  const runner = once(async (): Promise<{ deps: WorkerDeps; shell: AwsShell }> => {
    const shell = await awsShell();
    return { shell, deps: { ...shell.deps, runner: shell.sandboxRunner(sandboxInvoker(shell)) } };
  });

  const inline = opts.inlineSteps ?? process.env.FLOW_INLINE_STEPS === 'true';
  type Advance = z.infer<typeof advanceEvent>;
  type Invocation = Pick<Context, 'getRemainingTimeInMillis'> | undefined;

  const advance = async (e: Advance, context: Invocation): Promise<AdvanceOutput> => {
    const { deps, shell } = await runner();
    const ageSeconds = (deps.clock.now().getTime() - Date.parse(e.startedAt)) / 1000;
    if (shouldContinue({ events: e.events, ageSeconds }, opts.budget)) {
      // No turn here: the next execution's first Advance takes it (turns are safe to repeat).
      const job = await deps.store.getJob(e.workspaceId, e.flowJobId);
      if (!job) throw new Error(`flow-runner: flow job ${e.flowJobId} is gone`);
      await shell.flowRunner.continueAsNew(job, continuationOf(e.execution) + 1);
      return { workspaceId: e.workspaceId, flowJobId: e.flowJobId, wakes: 0, events: e.events, action: 'continue' };
    }
    const deadline = Date.now() + (context?.getRemainingTimeInMillis() ?? FLOW_RUNNER_TIMEOUT_SECONDS * 1000);
    const remainingMs = () => deadline - Date.now();
    const ran: InlineStep[] = [];
    // The wake counter once per invocation, before its first turn reads the run: a wake during a
    // later inline turn makes `park` refuse and the execution take one more turn (never a lost
    // wake), and an inline step costs no read or write of the wait record.
    const wakes = await shell.flowRunner.beginTurn(e.workspaceId, e.flowJobId);
    // The turn stores the step it starts already running for this invocation when it fits.
    const steps = inline ? new InlineSteps(deps.queue, deps, remainingMs) : null;
    const turnDeps = steps ? { ...deps, queue: steps } : deps;
    for (;;) {
      let next = turnAction(await advanceForRunner(turnDeps, e.workspaceId, e.flowJobId), e.wakeCheckSeconds);
      const held = steps?.take();
      if (held) {
        ran.push(await runHeldStep(deps, held));
        continue;
      }
      if (inline && next.action === 'run_step') {
        const step = await runStepInline(deps, e.workspaceId, next.step.jobId, remainingMs);
        if (step) {
          ran.push(step);
          continue;
        }
      }
      if (inline && next.action === 'wait') {
        // A step an earlier invocation died running: claimed again once its lease has lapsed, else waited for.
        const lost = await runningScriptSteps(deps, e.workspaceId, e.flowJobId);
        const rerun = lost.find((j) => leaseEndsInSeconds(deps, j) === 0);
        const step = rerun ? await runStepInline(deps, e.workspaceId, rerun.id, remainingMs) : null;
        if (step) {
          ran.push(step);
          continue;
        }
        if (rerun) next = { action: 'run_step', step: { jobId: rerun.id } };
        else if (lost.length > 0) next = { action: 'wait', timeoutSeconds: Math.min(next.timeoutSeconds ?? e.wakeCheckSeconds, 1 + Math.min(...lost.map((j) => leaseEndsInSeconds(deps, j)))) };
      }
      if (next.action === 'done') await shell.flowRunner.endRun(e.workspaceId, e.flowJobId);
      if (next.action === 'wait' && (await waitsForPeople(deps, e.workspaceId, e.flowJobId))) countApprovalWait();
      return { workspaceId: e.workspaceId, flowJobId: e.flowJobId, wakes, events: e.events + eventsOfTurn(next), ...next, ...ranOutput(ran) } as AdvanceOutput;
    }
  };

  return async (input: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<AdvanceOutput | Record<string, never>> => {
    // Lambda stamps its Errors metric with the invocation's start: so is the hand-over count. The
    // deadline less the function's timeout is that start (init included, when the deadline counts it).
    const invokedAt = new Date(Math.min(Date.now(), Date.now() + (context?.getRemainingTimeInMillis() ?? Infinity) - FLOW_RUNNER_TIMEOUT_SECONDS * 1000));
    const parsed = event.safeParse(input);
    // A malformed event is a bug in the state machine: fail the task loudly, change nothing.
    if (!parsed.success) throw new Error(`flow-runner: malformed event: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const e = parsed.data;
    if (e.op === 'advance') {
      const answer = handOver(await advance(e, context));
      if ('result' in answer) return answer.result;
      countHandOver(invokedAt);
      throw answer.error;
    }
    const { deps, shell } = await runner();
    if (e.op === 'park') {
      await shell.flowRunner.park(e.workspaceId, e.flowJobId, e.taskToken, e.wakes);
      return {};
    }
    // Abandon gets the Cause of Advance's last failure: a Lambda error's JSON, read as `type: message`.
    await abandonFlow(deps, e.workspaceId, e.flowJobId, readableCause(e.cause));
    await shell.flowRunner.endRun(e.workspaceId, e.flowJobId);
    return {};
  };
}

/** Whether the flow waits at an approval step or a ConsentGate (not for a sub-flow): the dashboard's approvals waiting. */
async function waitsForPeople(deps: WorkerDeps, workspaceId: string, flowJobId: string): Promise<boolean> {
  const status = (await deps.store.getJob(workspaceId, flowJobId))?.status;
  return status === 'suspended' || status === 'awaiting_approval';
}

/** On AWS, flow expressions run in the Node sandbox function, whose role has no permissions. */
export const handler = createFlowRunnerHandler((shell) => lambdaInvoke(traced(new LambdaClient({})), requireSandboxFunctions(shell.config), { tenantPerWorkspace: true }));
