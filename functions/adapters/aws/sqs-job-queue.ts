import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Job, JobQueue } from '../../ports.js';

/**
 * What a jobs-queue message carries: a reference, never the job itself. The job (arguments
 * included) is already in the store, and SQS messages are capped at 256 KB.
 */
export interface JobMessage {
  jobId: string;
  workspaceId: string;
  /**
   * Set when a flow's Step Functions execution sent the message (a step job): the worker completes
   * this task token once the job has finished, and the execution goes on.
   */
  taskToken?: string;
}

/**
 * Hands accepted script jobs to the worker Lambda through the SQS jobs queue. Each message's group
 * is its workspace: on a standard queue SQS then keeps a workspace with a large backlog from delaying
 * the others' messages (SQS fair queues), as the local pool takes turns between workspaces.
 */
export class SqsJobQueue implements JobQueue {
  private readonly client: SQSClient;
  private readonly queueUrl: string;

  constructor(opts: { client: SQSClient; queueUrl: string }) {
    this.client = opts.client;
    this.queueUrl = opts.queueUrl;
  }

  async enqueue(job: Pick<Job, 'id' | 'workspace_id'>): Promise<void> {
    await this.client.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: encodeJobMessage({ jobId: job.id, workspaceId: job.workspace_id }), MessageGroupId: job.workspace_id }),
    );
  }
}

export function encodeJobMessage(message: JobMessage): string {
  return JSON.stringify({ jobId: message.jobId, workspaceId: message.workspaceId, ...(message.taskToken ? { taskToken: message.taskToken } : {}) });
}

/**
 * Reads a message body back. Throws on anything else, so a malformed message fails its record and
 * ends in the dead-letter queue instead of being dropped.
 */
export function decodeJobMessage(body: string): JobMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new Error(`jobs queue message is not JSON: ${body.slice(0, 200)}`);
  }
  const { jobId, workspaceId, taskToken } = isRecord(parsed) ? parsed : {};
  if (typeof jobId !== 'string' || !jobId || typeof workspaceId !== 'string' || !workspaceId) {
    throw new Error(`jobs queue message lacks jobId/workspaceId: ${body.slice(0, 200)}`);
  }
  if (taskToken !== undefined && (typeof taskToken !== 'string' || !taskToken)) throw new Error(`jobs queue message has a malformed taskToken: ${body.slice(0, 200)}`);
  return { jobId, workspaceId, ...(taskToken ? { taskToken } : {}) };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
