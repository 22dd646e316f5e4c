import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Job, JobCompletion, JobStatus } from '../../ports.js';
import { parseStored } from '../../core/documents/parse.js';
import { jobRecord } from '../../core/documents/records.js';
import { keys } from './dynamo-keys.js';
import { jobItem, type Item, type JobPayload } from './dynamo-items.js';
import { blobKeys, INLINE_BUDGET, jobRefs, LIST_ELEMENT_OVERHEAD, utf8Bytes, type Offload, type Part } from './dynamo-offload.js';
import { conditionalUpdate, translateSizeError } from './dynamo-ops.js';
import { appendLogChunk, deleteLogChunks } from './dynamo-log-chunks.js';
import { AGAIN, RACE, retry } from '../../core/common/retry.js';

/** Every JobStatus not in FINISHED_STATUSES: the states completeJob may leave. */
const UNFINISHED = ['queued', 'running', 'suspended', 'awaiting_approval'] as const satisfies readonly JobStatus[];

type JobField = 'args' | 'result' | 'logs' | 'stream';

/**
 * The DynamoStore's writes of job payloads (args, result, logs, stream), which may offload to the
 * BlobStore (dynamo-offload.ts). An object is written before the item refers to it; when the
 * item write then loses its condition or fails, the object is blanked again.
 */
export class DynamoJobWrites {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly offload: Offload,
    private readonly runningLeaseMs?: number,
  ) {}

  async insert(record: Job): Promise<void> {
    const job = parseStored(jobRecord, record, `job ${record.id}`);
    const argsJson = job.args === null ? null : JSON.stringify(job.args);
    const resultJson = JSON.stringify(job.result ?? null);
    const part = (name: JobField, text: string | null): Part => ({ name, text, key: () => blobKeys.job(job.id, name) });
    const { refs, written } = await this.offload.stash(`job ${job.id}: args, result and logs`, [
      { budget: INLINE_BUDGET.args, parts: [part('args', argsJson)] },
      { budget: INLINE_BUDGET.completion, parts: [part('result', resultJson), part('logs', job.logs)] },
      { budget: INLINE_BUDGET.stream, parts: [part('stream', job.result_stream)] },
    ]);
    const stream = refs.has('stream') || !job.result_stream ? [] : [job.result_stream];
    const payload: JobPayload = {
      ...(refs.has('args') ? { args_ref: refs.get('args') } : { args_json: argsJson }),
      ...(refs.has('result') ? { result_ref: refs.get('result') } : { result_json: resultJson }),
      ...(refs.has('logs') ? { log_chunks: [], logs_ref: refs.get('logs') } : { log_chunks: job.logs ? [job.logs] : [] }),
      stream_chunks: stream,
      stream_refs: refs.has('stream') ? [refs.get('stream')!] : [],
      stream_bytes: stream.reduce((sum, c) => sum + utf8Bytes(c) + LIST_ELEMENT_OVERHEAD, 0),
      stream_seq: 0,
    };
    try {
      const lease = job.status === 'running' && job.started_at && this.runningLeaseMs !== undefined ? { lease_until: new Date(Date.parse(job.started_at) + this.runningLeaseMs).toISOString() } : {};
      await this.doc.send(new PutCommand({ TableName: this.table, Item: { ...jobItem(job, payload), ...lease }, ConditionExpression: 'attribute_not_exists(pk)' }));
    } catch (e) {
      await this.blankQuietly(written);
      throw translateSizeError(e, `job ${job.id}`);
    }
  }

  async complete(id: string, c: JobCompletion, completedAt: string): Promise<boolean> {
    const resultJson = JSON.stringify(c.result ?? null);
    const { refs, written } = await this.offload.stash(`job ${id}: result and logs`, [
      {
        budget: INLINE_BUDGET.completion,
        parts: [
          { name: 'result', text: resultJson, key: () => blobKeys.job(id, 'result') },
          { name: 'logs', text: c.logs, key: () => blobKeys.job(id, 'logs') },
        ],
      },
    ]);
    const resultRef = refs.get('result');
    const logsRef = refs.get('logs');
    const set = ['#status = :status', 'success = :success', 'completed_at = :completedAt', 'log_chunks = :logs'];
    // Leaving the unfinished states also takes the job out of the sparse status, running-flows and queued indexes.
    const remove = ['gsi2pk', 'gsi2sk', 'gsi3sk', 'gsi4sk'];
    const values: Item = {
      ':status': c.status,
      ':success': c.status === 'success',
      ':logs': logsRef || !c.logs ? [] : [c.logs],
      ':completedAt': completedAt,
      ...Object.fromEntries(UNFINISHED.map((s, i) => [`:u${i}`, s])),
    };
    if (resultRef) (set.push('result_ref = :resultRef'), remove.push('result_json'), (values[':resultRef'] = resultRef));
    else (set.push('result_json = :result'), remove.push('result_ref'), (values[':result'] = resultJson));
    if (logsRef) (set.push('logs_ref = :logsRef'), (values[':logsRef'] = logsRef));
    else remove.push('logs_ref');
    let old: Item | null;
    try {
      old = await this.update(id, `SET ${set.join(', ')} REMOVE ${remove.join(', ')}`, `#status IN (${UNFINISHED.map((_, i) => `:u${i}`).join(', ')})`, values, 'UPDATED_OLD');
    } catch (e) {
      await this.blankQuietly(written);
      throw e;
    }
    if (!old) {
      // Finished already (a cancel, a redelivery): the objects of this completion are nobody's.
      await this.blankQuietly(written);
      return false;
    }
    // A result or logs the job was inserted with are no longer referred to.
    await this.blankQuietly([old.result_ref, old.logs_ref].filter((k): k is string => typeof k === 'string'));
    return true;
  }

  /**
   * Live logs are items of their own beside the job (dynamo-log-chunks.ts): the job item is not
   * rewritten per chunk. Completion stores the full text (offloaded when large), so a chunk too
   * large for an item is dropped.
   */
  async appendLogs(id: string, chunk: string): Promise<void> {
    try {
      await appendLogChunk(this.doc, this.table, id, chunk);
    } catch (e) {
      if ((e as Error).name !== 'ValidationException') throw e;
    }
  }

  /**
   * Appends to the inline chunk list while `stream_bytes` (the inline list's size) stays within
   * its budget; past it, the chunks move to the BlobStore (spillStream) and appending starts over
   * on an empty list. Without a BlobStore the list grows until DynamoDB refuses the item, which
   * surfaces as ItemTooLargeError.
   */

  async appendStream(id: string, chunk: string): Promise<void> {
    const size = utf8Bytes(chunk) + LIST_ELEMENT_OVERHEAD;
    const room = INLINE_BUDGET.stream - size;
    if (!this.offload.enabled || room >= 0) {
      const values: Item = { ':chunk': [chunk], ':true': true, ':running': 'running', ':zero': 0, ':size': size, ':one': 1 };
      if (this.offload.enabled) values[':room'] = room;
      const appended = await this.update(
        id,
        'SET stream_chunks = list_append(stream_chunks, :chunk), streaming = :true, ' +
          'stream_bytes = if_not_exists(stream_bytes, :zero) + :size, stream_seq = if_not_exists(stream_seq, :zero) + :one',
        // Only a running job streams: a chunk arriving after completion or cancel is dropped.
        this.offload.enabled ? '#status = :running AND stream_bytes <= :room' : '#status = :running',
        values,
      );
      if (appended || !this.offload.enabled) return;
    }
    await this.spillStream(id, chunk);
  }

  /**
   * Moves the inline chunks, followed by `chunk`, into one new object appended to `stream_refs`,
   * and empties the inline list. The stream reads as the segments in order, then the inline
   * chunks, so append order is kept. The swap is conditional on `stream_seq`, which every append,
   * spill and scrub bumps: a write between reading the chunks and the swap makes the swap fail
   * and start over (its object is blanked), so no chunk is lost or stored twice.
   */
  private async spillStream(id: string, chunk: string): Promise<void> {
    await retry({ attempts: 10, ...RACE, exhausted: () => new Error(`job ${id}: could not append to its stream, which kept changing meanwhile`) }, async () => {
      const { Item: item } = await this.doc.send(
        new GetCommand({
          TableName: this.table,
          Key: keys.job(id),
          ConsistentRead: true,
          ProjectionExpression: '#status, stream_chunks, stream_seq',
          ExpressionAttributeNames: { '#status': 'status' },
        }),
      );
      if (!item || item.status !== 'running') return;
      const seq = item.stream_seq as number | undefined;
      const key = blobKeys.job(id, 'stream');
      await this.offload.putAll([[key, ((item.stream_chunks ?? []) as string[]).join('') + chunk]]);
      const values: Item = { ':none': [], ':segment': [key], ':zero': 0, ':next': (seq ?? 0) + 1, ':true': true, ':running': 'running' };
      if (seq !== undefined) values[':seq'] = seq;
      const swapped = await this.update(
        id,
        'SET stream_refs = list_append(if_not_exists(stream_refs, :none), :segment), stream_chunks = :none, stream_bytes = :zero, stream_seq = :next, streaming = :true',
        `#status = :running AND ${seq === undefined ? 'attribute_not_exists(stream_seq)' : 'stream_seq = :seq'}`,
        values,
      );
      if (swapped) return;
      await this.blankQuietly([key]);
      return AGAIN;
    });
  }

  /**
   * Blanks every object the item refers to, then clears the item. The objects go first so that a
   * failure half-way leaves references to blanked objects (read as scrubbed) rather than
   * forgotten objects with data; objects a racing write added meanwhile are blanked last.
   */
  async scrub(id: string): Promise<void> {
    let before: string[] = [];
    if (this.offload.enabled) {
      const { Item: item } = await this.doc.send(
        new GetCommand({ TableName: this.table, Key: keys.job(id), ConsistentRead: true, ProjectionExpression: 'args_ref, result_ref, logs_ref, stream_refs' }),
      );
      if (!item) return;
      before = jobRefs(item);
      await this.offload.blank(before);
    }
    const old = await this.update(
      id,
      'SET args_json = :null, result_json = :nullJson, log_chunks = :empty, stream_chunks = :empty, stream_refs = :empty, stream_bytes = :zero, ' +
        'stream_seq = if_not_exists(stream_seq, :zero) + :one, deleted = :true REMOVE args_ref, result_ref, logs_ref',
      'attribute_exists(pk)',
      { ':null': null, ':nullJson': 'null', ':empty': [], ':zero': 0, ':one': 1, ':true': true },
      'UPDATED_OLD',
    );
    if (old && this.offload.enabled) await this.offload.blank(jobRefs(old).filter((k) => !before.includes(k)));
    await deleteLogChunks(this.doc, this.table, id);
  }

  /** A conditional update of an existing job: null when the condition (or the job) failed. */
  private update(id: string, update: string, condition: string, values: Item, returnValues?: 'UPDATED_OLD'): Promise<Item | null> {
    return conditionalUpdate(this.doc, {
      table: this.table,
      key: keys.job(id),
      update,
      condition: `attribute_exists(pk) AND (${condition})`,
      values,
      what: `job ${id}`,
      returnValues,
    });
  }

  /** Cleanup after the write that mattered has succeeded or failed: its own error wins. */
  private async blankQuietly(keys: string[]): Promise<void> {
    await this.offload.blank(keys).catch(() => {});
  }
}
