import { SendTaskSuccessCommand, StartExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { readEntity, tryCreateEntity, tryReplaceEntity } from '../../core/store/entities.js';
import type { FlowWait } from '../../core/documents/entity-values.js';
import type { Clock, FlowDriver, Job, Store } from '../../ports.js';
import { AGAIN, RACE, retry } from '../../core/common/retry.js';
import { continuationSuffix } from './flow-execution-budget.js';

/**
 * Flows on Step Functions (docs/architecture.md "Flow runner"): one Standard execution of the flow-runner
 * state machine (statemachines/flow-runner.ts) per flow job. Its Advance state runs the core's
 * interpreter; between turns it waits on task tokens: one per step job it sends (completed by the
 * worker when the job has finished), or one while the flow waits to be woken (an approval, a
 * cancel), completed by `wake` and timed out by the state itself at an approval step's deadline.
 *
 * That waiting token is kept in the store under the flow job's id (never in a URL), beside a
 * counter of wakes: a turn notes the counter before it reads the run, and the token is parked only
 * if no wake came since — otherwise the execution goes straight to its next turn. So a resume that
 * lands while a turn is under way is never lost.
 */


const KIND = 'flow_wait';
const ATTEMPTS = 20;

/** Execution names allow 80 characters; these are safe in names, ARNs and the console. */
const NAME_MAX = 80;

/**
 * The flow's path and the job id, so a run is findable in the console (ids are 36 characters).
 * A flow that continued as a new execution (flow-execution-budget.ts) ends in `.c<n>`.
 */
export function executionName(path: string, jobId: string, continuation = 0): string {
  const suffix = continuationSuffix(continuation);
  const room = NAME_MAX - jobId.length - 1 - suffix.length;
  const readable = path.replace(/[^A-Za-z0-9_.-]/g, '_').slice(-room);
  return (readable ? `${readable}-${jobId}` : jobId) + suffix;
}

/**
 * What a flow-runner execution starts with, and what each of its Advance turns is given: `events`
 * counts its history so far (flow-execution-budget.ts).
 */
export interface FlowExecutionInput {
  workspaceId: string;
  flowJobId: string;
  events: number;
}

/**
 * Starts the execution of a flow job, named after it: starting it again (a redelivered stream
 * record, a retried request) finds the name taken and changes nothing.
 */
export async function startFlowExecution(client: SFNClient, stateMachineArn: string, job: Pick<Job, 'id' | 'workspace_id' | 'script_path'>, continuation = 0): Promise<void> {
  const input: FlowExecutionInput = { workspaceId: job.workspace_id, flowJobId: job.id, events: 0 };
  try {
    await client.send(new StartExecutionCommand({ stateMachineArn, name: executionName(job.script_path, job.id, continuation), input: JSON.stringify(input) }));
  } catch (e) {
    // Same name, closed execution: the flow already ran.
    if ((e as Error).name !== 'ExecutionAlreadyExists') throw e;
  }
}

export class StepFunctionsFlowRunner implements FlowDriver {
  private readonly client: SFNClient;
  private readonly stateMachineArn: string | null;
  private readonly store: Store;
  private readonly clock: Clock;

  constructor(opts: { client: SFNClient; stateMachineArn: string | null; store: Store; clock: Clock }) {
    this.client = opts.client;
    this.stateMachineArn = opts.stateMachineArn;
    this.store = opts.store;
    this.clock = opts.clock;
  }

  /** Starts the flow job's execution. Starting it again is harmless: the name is the job's. */
  async start(job: Job): Promise<void> {
    if (!this.stateMachineArn) throw new Error('STATE_MACHINE_ARN must name the flow-runner state machine to run flows');
    await startFlowExecution(this.client, this.stateMachineArn, job);
  }

  /**
   * The flow job goes on in its next execution (`continuation` in the name); the one asking ends.
   * Asking again (a retried Advance) finds the name taken and changes nothing.
   */
  async continueAsNew(job: Pick<Job, 'id' | 'workspace_id' | 'script_path'>, continuation: number): Promise<void> {
    if (!this.stateMachineArn) throw new Error('STATE_MACHINE_ARN must name the flow-runner state machine to continue flows');
    await startFlowExecution(this.client, this.stateMachineArn, job, continuation);
  }

  /** The execution sends its step jobs itself (a Map of SQS sends waiting for task tokens). */
  async dispatch(): Promise<void> {}

  /** The waiting state's own timeout (TimeoutSecondsPath) wakes the flow at an approval deadline. */
  async wakeAt(): Promise<void> {}

  async wake(workspaceId: string, flowJobId: string): Promise<void> {
    const taken = await this.update(workspaceId, flowJobId, (wait) => (wait ? { wakes: wait.wakes + 1, token: null } : null));
    if (taken?.before.token) await this.completeTask(taken.before.token);
  }

  /** Before a turn: the wake counter that `park` compares against. Creates the record on the first turn. */
  async beginTurn(workspaceId: string, flowJobId: string): Promise<number> {
    const changed = await this.update(workspaceId, flowJobId, (wait) => wait ?? { wakes: 0, token: null });
    return changed?.after.wakes ?? 0;
  }

  /**
   * Keeps the waiting state's token until the flow is woken; if a wake came since the turn began
   * (`seenWakes`), or the run is over, completes it at once so the next turn starts.
   */
  async park(workspaceId: string, flowJobId: string, token: string, seenWakes: number): Promise<void> {
    const parked = await this.update(workspaceId, flowJobId, (wait) => (wait && wait.wakes === seenWakes ? { wakes: wait.wakes, token } : null));
    if (!parked) await this.completeTask(token);
  }

  /** The run is over: its record goes. */
  async endRun(workspaceId: string, flowJobId: string): Promise<void> {
    await this.store.deleteEntity(KIND, workspaceId, flowJobId);
  }

  /**
   * Lets a waiting state go on. A token whose task already ended (timed out, completed by a
   * duplicate delivery) is refused by Step Functions; that changes nothing here.
   */
  async completeTask(token: string): Promise<void> {
    try {
      await this.client.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' }));
    } catch (e) {
      if (!['TaskDoesNotExist', 'TaskTimedOut', 'InvalidToken'].includes((e as Error).name)) throw e;
    }
  }

  /**
   * Read-modify-write of the flow's wait record with optimistic versions. `change` returns the new
   * value, or null to leave the record as it is (and report null).
   */
  private async update(workspaceId: string, flowJobId: string, change: (wait: FlowWait | null) => FlowWait | null): Promise<{ before: FlowWait; after: FlowWait } | null> {
    return retry({ attempts: ATTEMPTS, ...RACE, exhausted: () => new Error(`flow ${flowJobId}: its wait record keeps changing`) }, async () => {
      const current = await readEntity(this.store, KIND, workspaceId, flowJobId);
      const next = change(current?.value ?? null);
      if (!next) return null;
      const before = current?.value ?? next;
      // Unchanged (a stored null token may read back absent): no write.
      if (current && current.value.wakes === next.wakes && (current.value.token ?? null) === (next.token ?? null)) return { before, after: next };
      const stored = current
        ? await tryReplaceEntity(this.store, this.clock, current, next)
        : await tryCreateEntity(this.store, this.clock, KIND, workspaceId, flowJobId, next);
      return stored ? { before, after: next } : AGAIN;
    });
  }
}
