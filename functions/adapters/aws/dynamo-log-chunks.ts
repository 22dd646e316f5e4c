import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { keys, LOG_CHUNK_PREFIX, TTL_ATTRIBUTE } from './dynamo-keys.js';
import { batchDelete, queryAll } from './dynamo-ops.js';

/**
 * A running job's live log on DynamoDB: each flushed chunk (core/runs/live-logs.ts, every 300 ms at
 * most) is an item of its own in the job's partition, `JOB#<id>` / `LOG#<seq>`, so a chunk costs
 * the write units of its own bytes, never a rewrite of the job item (whose args, result and
 * earlier logs would be paid for again at every flush). Readers of a running job query the chunks
 * in sequence order, page by page; completion stores the full text on the job item, after which
 * the chunks are ignored and expire.
 */

/** How long chunk items are kept: far past the longest run (Lambda's 15 minutes), then DynamoDB's TTL removes them. */
const CHUNK_TTL_SECONDS = 7 * 24 * 3600;

let counter = 0;

/**
 * The next chunk's sequence: the time, then a counter of this process. One writer appends a job's
 * chunks one after another (core/runs/live-logs.ts chains them), so its keys only grow; a later
 * attempt (another worker after a redelivery) writes later in time, so it sorts after.
 */
function nextSeq(now: number): string {
  counter = (counter + 1) % 1e9;
  return `${String(now).padStart(15, '0')}#${String(counter).padStart(9, '0')}`;
}

export async function appendLogChunk(doc: DynamoDBDocumentClient, table: string, jobId: string, chunk: string, now = Date.now()): Promise<void> {
  await doc.send(
    new PutCommand({
      TableName: table,
      Item: { ...keys.logChunk(jobId, nextSeq(now)), entity: 'log_chunk', chunk, [TTL_ATTRIBUTE]: Math.floor(now / 1000) + CHUNK_TTL_SECONDS },
    }),
  );
}

const chunksOf = (doc: DynamoDBDocumentClient, table: string, jobId: string, attributes: string) =>
  queryAll(doc, table, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.job(jobId).pk, ':prefix': LOG_CHUNK_PREFIX },
    ProjectionExpression: attributes,
    ConsistentRead: true,
  });

/** A running job's live log: its chunks in sequence order, every page of them (strongly consistent). */
export async function readLogChunks(doc: DynamoDBDocumentClient, table: string, jobId: string): Promise<string> {
  return (await chunksOf(doc, table, jobId, 'chunk')).map((i) => (typeof i.chunk === 'string' ? i.chunk : '')).join('');
}

/** A job's data is deleted (retention, a delete): its chunks go at once too, not at their expiry. */
export async function deleteLogChunks(doc: DynamoDBDocumentClient, table: string, jobId: string): Promise<void> {
  await batchDelete(doc, table, await chunksOf(doc, table, jobId, 'pk, sk'));
}
