import { BatchGetCommand, BatchWriteCommand, UpdateCommand, paginateQuery, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { ItemTooLargeError, type Item } from './dynamo-items.js';
import { AGAIN, retry, THROTTLE } from '../../core/common/retry.js';

/** Unprocessed batch entries mean throttling: wait a little longer each round, until all are done. */
const UNTIL_PROCESSED = { attempts: Infinity, ...THROTTLE, exhausted: () => new Error('unreachable: unbounded attempts') };

/** Small DynamoDB helpers the store needs and the SDK leaves to the caller. */

const BATCH_GET_MAX = 100;
const BATCH_WRITE_MAX = 25;

export function isConditionFailure(e: unknown): boolean {
  return (e as Error | null)?.name === 'ConditionalCheckFailedException';
}

/**
 * The per-item cancellation codes of a canceled transaction ('ConditionalCheckFailed',
 * 'TransactionConflict', 'None', ...), or null when `e` is some other error.
 */
export function transactionFailures(e: unknown): string[] | null {
  if ((e as Error | null)?.name !== 'TransactionCanceledException') return null;
  const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.map((r) => r.Code ?? 'None');
}

/** DynamoDB reports an update that grows an item past 400 KB as a generic ValidationException. */
export function translateSizeError(e: unknown, what: string): unknown {
  const err = e as Error | null;
  if (err?.name === 'ValidationException' && /item size/i.test(err.message)) {
    return new ItemTooLargeError(what, "would grow past DynamoDB's 400 KB item limit with this write");
  }
  return e;
}

export interface ConditionalUpdate {
  table: string;
  key: Item;
  update: string;
  condition: string;
  values: Item;
  /** Names the item in a size error. */
  what: string;
  returnValues?: 'ALL_OLD' | 'UPDATED_OLD' | 'ALL_NEW';
}

/**
 * An update that may lose its condition: null then, else the attributes asked for ({} by default).
 * `#status` stands for the reserved word `status`; DynamoDB rejects a name placeholder left unused.
 */
export async function conditionalUpdate(doc: DynamoDBDocumentClient, u: ConditionalUpdate): Promise<Item | null> {
  const mentionsStatus = u.update.includes('#status') || u.condition.includes('#status');
  try {
    const r = await doc.send(
      new UpdateCommand({
        TableName: u.table,
        Key: u.key,
        UpdateExpression: u.update,
        ConditionExpression: u.condition,
        ExpressionAttributeNames: mentionsStatus ? { '#status': 'status' } : undefined,
        ExpressionAttributeValues: u.values,
        ReturnValues: u.returnValues,
      }),
    );
    return r.Attributes ?? {};
  } catch (e) {
    if (isConditionFailure(e)) return null;
    throw translateSizeError(e, u.what);
  }
}

/** Every item the query matches: a Query page stops at 1 MB, so follow LastEvaluatedKey to the end. */
export async function queryAll(doc: DynamoDBDocumentClient, table: string, input: Omit<QueryCommandInput, 'TableName'>): Promise<Item[]> {
  const items: Item[] = [];
  for await (const page of paginateQuery({ client: doc }, { TableName: table, ...input })) items.push(...(page.Items ?? []));
  return items;
}

const keyOf = (i: Item) => `${i.pk}\u0000${i.sk}`;

/**
 * Reads the items behind `refs` (anything carrying pk/sk, such as index entries) with strongly
 * consistent reads, in the order of `refs`; items deleted meanwhile are left out. `attributes`
 * limits what is read (the keys are always included).
 */
export async function batchGet(doc: DynamoDBDocumentClient, table: string, refs: Item[], attributes?: string[]): Promise<Item[]> {
  const projection = attributes ? { ProjectionExpression: ['pk', 'sk', ...attributes].join(', ') } : {};
  const found = new Map<string, Item>();
  for (let i = 0; i < refs.length; i += BATCH_GET_MAX) {
    let pending: Item[] | undefined = refs.slice(i, i + BATCH_GET_MAX).map((r) => ({ pk: r.pk, sk: r.sk }));
    await retry(UNTIL_PROCESSED, async () => {
      const r = await doc.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: true, ...projection } } }));
      for (const item of r.Responses?.[table] ?? []) found.set(keyOf(item), item);
      pending = r.UnprocessedKeys?.[table]?.Keys as Item[] | undefined;
      return pending?.length ? AGAIN : undefined;
    });
  }
  return refs.map((r) => found.get(keyOf(r))).filter((i): i is Item => i !== undefined);
}

export async function batchDelete(doc: DynamoDBDocumentClient, table: string, keys: Item[]): Promise<void> {
  for (let i = 0; i < keys.length; i += BATCH_WRITE_MAX) {
    let pending = keys.slice(i, i + BATCH_WRITE_MAX).map((Key) => ({ DeleteRequest: { Key } }));
    if (pending.length === 0) continue;
    await retry(UNTIL_PROCESSED, async () => {
      const r = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
      pending = (r.UnprocessedItems?.[table] ?? []) as typeof pending;
      return pending.length ? AGAIN : undefined;
    });
  }
}

/** Code-unit order, as DynamoDB and SQLite sort the ASCII timestamps and hashes compared here. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
