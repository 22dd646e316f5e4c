import { paginateQuery, QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { compare } from './dynamo-ops.js';
import type { Item } from './dynamo-items.js';

/** One Query of a sharded index, `:pk` in its key condition standing for each partition in turn. */
export interface ShardedQuery extends Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'> {
  IndexName: string;
  KeyConditionExpression: string;
  /** The index's sort key attribute, the order the partitions are merged in. */
  sortKey: string;
}

/**
 * The entries of every partition in `partitions`, merged into one stream in the index's sort order
 * (descending when `ScanIndexForward` is false), yielded in groups of up to `groupSize`. Each
 * partition is read page by page, only as far as the merge has consumed it: the first page of every
 * partition is read at once (in parallel), a next page only when that partition's entries ran out,
 * and a consumer that stops early reads no further. Sort keys end with the job id, so the order is
 * total and a cursor "strictly after this sort key" is every partition's position at once.
 */
export async function* mergedQuery(doc: DynamoDBDocumentClient, table: string, q: ShardedQuery, partitions: string[], groupSize: number): AsyncGenerator<Item[]> {
  const { sortKey, ...input } = q;
  const descending = input.ScanIndexForward === false;
  const shards = partitions.map((pk) => {
    const pages = paginateQuery({ client: doc }, { ...input, TableName: table, ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ':pk': pk } });
    return { pages: pages[Symbol.asyncIterator](), buffer: [] as Item[], done: false };
  });
  // Fills a shard's buffer unless it is exhausted; a page may be empty (a filter) yet not the last.
  const refill = async (shard: (typeof shards)[number]) => {
    while (shard.buffer.length === 0 && !shard.done) {
      const next = await shard.pages.next();
      if (next.done) shard.done = true;
      else shard.buffer.push(...(next.value.Items ?? []));
    }
  };
  await Promise.all(shards.map(refill));
  let group: Item[] = [];
  for (;;) {
    let best: (typeof shards)[number] | undefined;
    for (const shard of shards) {
      if (shard.buffer.length === 0) continue;
      if (!best) best = shard;
      else {
        const order = compare(String(shard.buffer[0]![sortKey]), String(best.buffer[0]![sortKey]));
        if (descending ? order > 0 : order < 0) best = shard;
      }
    }
    if (!best) break;
    group.push(best.buffer.shift()!);
    await refill(best);
    if (group.length >= groupSize) {
      yield group;
      group = [];
    }
  }
  if (group.length) yield group;
}

/** Every entry of every partition (sweeps that read all there is), partitions read in parallel. */
export async function queryPartitions(doc: DynamoDBDocumentClient, table: string, input: Omit<QueryCommandInput, 'TableName'>, partitions: string[]): Promise<Item[]> {
  const all = await Promise.all(
    partitions.map(async (pk) => {
      const items: Item[] = [];
      const pages = paginateQuery({ client: doc }, { ...input, TableName: table, ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ':pk': pk } });
      for await (const page of pages) items.push(...(page.Items ?? []));
      return items;
    }),
  );
  return all.flat();
}

/**
 * How many entries the partitions hold together, at most `atMost`: each partition counted in
 * parallel (`Select: COUNT`, no items returned), page by page only as far as `atMost`.
 */
export async function countPartitions(doc: DynamoDBDocumentClient, table: string, input: Omit<QueryCommandInput, 'TableName' | 'Select' | 'Limit' | 'ExclusiveStartKey'>, partitions: string[], atMost: number): Promise<number> {
  if (atMost <= 0) return 0;
  const counts = await Promise.all(
    partitions.map(async (pk) => {
      let count = 0;
      let start: Item | undefined;
      do {
        const page = await doc.send(
          new QueryCommand({
            ...input,
            TableName: table,
            ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ':pk': pk },
            Select: 'COUNT',
            Limit: atMost - count,
            ExclusiveStartKey: start,
          }),
        );
        count += page.Count ?? 0;
        start = page.LastEvaluatedKey;
      } while (start && count < atMost);
      return count;
    }),
  );
  return Math.min(atMost, counts.reduce((sum, n) => sum + n, 0));
}
