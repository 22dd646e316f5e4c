import type { SFNClient } from '@aws-sdk/client-sfn';
import type { AttributeValue, DynamoDBRecord } from 'aws-lambda';
import type { Job, JobQueue } from '../../ports.js';
import type { SqsJobQueue } from './sqs-job-queue.js';
import { startFlowExecution } from './step-functions-flow-runner.js';

/**
 * Jobs reach the worker through the table's stream, not through a second write after the insert:
 * the insert of a queued job IS its enqueue. The stream carries every committed insert to the
 * dispatcher function (functions/handlers/job-dispatcher.ts), which sends a script job to the
 * jobs queue or starts a flow job's execution, retrying until it has. A crash between "stored"
 * and "sent" therefore cannot strand a job: there is no such moment in the api.
 *
 * Step jobs and sub-flows are not dispatched here: their flow's execution sends them itself
 * (with a task token), so only jobs without a parent are.
 */

/** What the api's core calls `enqueue` on: nothing to do, the stored job is already on its way. */
export class TableStreamJobQueue implements JobQueue {
  async enqueue(): Promise<void> {}
}

/**
 * The Lambda event filter for the stream (lib/constructs/job-delivery.ts): inserted job items,
 * queued, without a parent job. `dispatchableJob` checks the same, so a missing filter changes
 * only what is billed, never what is sent.
 */
export const DISPATCH_FILTER = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { entity: { S: ['job'] }, status: { S: ['queued'] }, parent_job: { NULL: [true] } } },
} as const;

/**
 * A run held for a concurrency slot (core/jobs/concurrency.ts) is stored held, which is not sent; the
 * write that lets it go (held true -> false, still queued) is its enqueue, by the same stream.
 */
export const RELEASE_FILTER = {
  eventName: ['MODIFY'],
  dynamodb: { OldImage: { held: { BOOL: [true] } }, NewImage: { entity: { S: ['job'] }, status: { S: ['queued'] }, held: { BOOL: [false] }, parent_job: { NULL: [true] } } },
} as const;

/** Every pattern of the dispatcher's mapping (any may match). */
export const DISPATCH_FILTERS = [DISPATCH_FILTER, RELEASE_FILTER] as const;

export type DispatchableJob = Pick<Job, 'id' | 'workspace_id' | 'script_path' | 'kind'>;

/** The job a stream record inserted, when it is one the dispatcher hands on; null otherwise. */
export function dispatchableJob(record: DynamoDBRecord): DispatchableJob | null {
  const image = record.dynamodb?.NewImage;
  if (!image) return null;
  // Inserted not held, or let go of a concurrency hold: the stored write is the enqueue.
  const inserted = record.eventName === 'INSERT' && image.held?.BOOL !== true;
  const released = record.eventName === 'MODIFY' && record.dynamodb?.OldImage?.held?.BOOL === true && image.held?.BOOL === false;
  if (!inserted && !released) return null;
  if (text(image.entity) !== 'job' || text(image.status) !== 'queued') return null;
  if (image.parent_job !== undefined && image.parent_job.NULL !== true) return null;
  const [id, workspaceId, scriptPath, kind] = [text(image.id), text(image.workspace_id), text(image.script_path), text(image.kind)];
  if (!id || !workspaceId || scriptPath === undefined || !kind) throw new Error(`job item ${text(image.pk) ?? '?'} in the stream lacks id, workspace_id, script_path or kind`);
  return { id, workspace_id: workspaceId, script_path: scriptPath, kind: kind as Job['kind'] };
}

/** Sends a dispatchable job on: a flow job starts its execution, any other goes to the jobs queue. */
export class JobDispatcher {
  constructor(private readonly opts: { scripts: SqsJobQueue; sfn: SFNClient; stateMachineArn: string }) {}

  async dispatch(job: DispatchableJob): Promise<void> {
    if (job.kind === 'flow') await startFlowExecution(this.opts.sfn, this.opts.stateMachineArn, job);
    else await this.opts.scripts.enqueue(job);
  }
}

function text(value: AttributeValue | undefined): string | undefined {
  return value?.S;
}
