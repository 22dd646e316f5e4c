import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { FlowDriver, Job, JobQueue } from '../../ports.js';

/**
 * What a jobs-queue message carries: a reference, never the job itself. The job (arguments
 * included) is already in the store, and SQS messages are capped at 256 KB.
 */
export interface JobMessage {
  jobId: string;
  workspaceId: string;
  /** `run` (the default): claim and run the job; `advance`: run the flow interpreter on a flow job. */
  action?: 'run' | 'advance';
}

/** Hands accepted jobs, and flows to advance, to the worker Lambda through the SQS jobs queue. */
export class SqsJobQueue implements JobQueue, FlowDriver {
  private readonly client: SQSClient;
  private readonly queueUrl: string;

  constructor(opts: { client: SQSClient; queueUrl: string }) {
    this.client = opts.client;
    this.queueUrl = opts.queueUrl;
  }

  async enqueue(job: Job): Promise<void> {
    await this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: encodeJobMessage({ jobId: job.id, workspaceId: job.workspace_id }) }));
  }

  async wake(workspaceId: string, flowJobId: string): Promise<void> {
    await this.wakeAt(workspaceId, flowJobId, new Date(0));
  }

  /**
   * A delayed message: SQS delays at most 15 minutes, so a later time is reached in hops — the
   * flow, woken early, finds its timeout not yet due and asks again.
   */
  async wakeAt(workspaceId: string, flowJobId: string, at: Date): Promise<void> {
    const delay = Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((at.getTime() - Date.now()) / 1000)));
    await this.client.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, DelaySeconds: delay, MessageBody: encodeJobMessage({ jobId: flowJobId, workspaceId, action: 'advance' }) }),
    );
  }
}

const MAX_DELAY_SECONDS = 900;

export function encodeJobMessage(message: JobMessage): string {
  return JSON.stringify({ jobId: message.jobId, workspaceId: message.workspaceId, ...(message.action === 'advance' ? { action: 'advance' } : {}) });
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
  const { jobId, workspaceId, action } = (parsed ?? {}) as Partial<Record<keyof JobMessage, unknown>>;
  if (typeof jobId !== 'string' || !jobId || typeof workspaceId !== 'string' || !workspaceId) {
    throw new Error(`jobs queue message lacks jobId/workspaceId: ${body.slice(0, 200)}`);
  }
  if (action !== undefined && action !== 'run' && action !== 'advance') throw new Error(`jobs queue message has an unknown action: ${body.slice(0, 200)}`);
  return { jobId, workspaceId, action: action ?? 'run' };
}
