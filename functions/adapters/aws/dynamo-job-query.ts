import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { matchesJobQuery } from '../../core/store/json-subset.js';
import type { Job, JobQuery } from '../../ports.js';
import { GSI1, GSI3, gsi1, gsi3 } from './dynamo-keys.js';
import { batchGet } from './dynamo-ops.js';
import { mergedQuery } from './dynamo-sharded-query.js';
import type { Item } from './dynamo-items.js';

/**
 * The run list on DynamoDB. GSI1 holds a workspace's jobs sorted by `<created_at>#<id>` in
 * WORKSPACE_JOB_SHARDS partitions, each newest first when read descending, merged into one order
 * (dynamo-sharded-query.ts); the time range and the cursor are every shard's key condition (the
 * cursor, a position in that total order, is each shard's position at once); status and
 * path (exact or prefix) are filtered in the index (both are projected into it). The jobs are then read from
 * the table (consistent, and the index may lag) and the remaining filters — kind, user, args,
 * result — are applied to them, page after page until the limit is reached.
 *
 * A workspace's running flows (status `running`, kind `flow`: the approvals and "waiting" views)
 * come from GSI3 instead, which holds only running flows, sorted and sharded the same way: one
 * Query per shard per page, and no finished run read past.
 */
export function jobIndexOf(q: { workspace_id: string; status?: string; kind?: string }): { index: string; pk: string; sk: string; partitions: string[]; statusInIndex: boolean } {
  if (q.status === 'running' && q.kind === 'flow') return { index: GSI3, pk: 'gsi3pk', sk: 'gsi3sk', partitions: gsi3.runningFlowPartitionsOf(q.workspace_id), statusInIndex: false };
  return { index: GSI1, pk: 'gsi1pk', sk: 'gsi1sk', partitions: gsi1.jobPartitionsOf(q.workspace_id), statusInIndex: true };
}

export async function queryJobItems(doc: DynamoDBDocumentClient, table: string, q: JobQuery, toJob: (item: Item) => Promise<Job>): Promise<Job[]> {
  const values: Item = {};
  const names: Record<string, string> = {};
  const filters: string[] = [];
  const index = jobIndexOf(q);
  let key = `${index.pk} = :pk`;
  const upper = upperBound(q);
  if (q.created_after) {
    // BETWEEN is inclusive: a job exactly at the cursor is dropped again by matchesJobQuery.
    key += ` AND ${index.sk} BETWEEN :lo AND :hi`;
    values[':lo'] = q.created_after;
    values[':hi'] = upper ?? '\uffff';
  } else if (upper) {
    key += ` AND ${index.sk} < :hi`;
    values[':hi'] = upper;
  }
  if (q.status && index.statusInIndex) {
    filters.push('#status = :status');
    names['#status'] = 'status';
    values[':status'] = q.status;
  }
  if (q.path_prefix) {
    filters.push('begins_with(script_path, :prefix)');
    values[':prefix'] = q.path_prefix;
  }
  if (q.path !== undefined) {
    filters.push('script_path = :path');
    values[':path'] = q.path;
  }
  const pages = mergedQuery(
    doc,
    table,
    {
      IndexName: index.index,
      sortKey: index.sk,
      KeyConditionExpression: key,
      ...(filters.length ? { FilterExpression: filters.join(' AND ') } : {}),
      ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      // Limit counts items read before the filter: read at least a page's worth each time.
      Limit: Math.max(q.limit, 100),
    },
    index.partitions,
    Math.max(q.limit, 100),
  );
  const found: Job[] = [];
  for await (const page of pages) {
    const items = await batchGet(doc, table, page);
    // batchGet keeps the order of the index entries, which is the list's order.
    for (const item of items) {
      const job = await toJob(item);
      if (matchesJobQuery(job, q)) found.push(job);
      if (found.length >= q.limit) return found;
    }
  }
  return found;
}

/** The exclusive upper sort key: the lower of `created_before` and the cursor's position. */
function upperBound(q: JobQuery): string | null {
  const cursor = q.after ? `${q.after.created_at}#${q.after.id}` : null;
  const before = q.created_before ?? null;
  if (cursor === null) return before;
  if (before === null) return cursor;
  return cursor < before ? cursor : before;
}
