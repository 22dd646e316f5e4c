import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand, type _Record } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { EVENTS_STREAM_FILTERS } from '../../lib/constructs/events-filter.js';

/**
 * Lambda's DynamoDB stream event source mapping, for the AWS shell on this machine: reads the
 * table's stream on DynamoDB Local, keeps the records the stack's filters keep (outbox items inserted
 * or redelivered, lib/constructs/events-filter.ts) and hands them to the events handler in batches, as
 * Lambda would. A failed invocation is retried with the same batch, as the mapping retries.
 */
export interface StreamSource {
  stop(): Promise<void>;
}

const POLL_MS = 100;
const SHARDS_EVERY_MS = 5_000;

/** `env`: the emulators' environment (aws-emulators.ts), naming the table, endpoint, region and credentials. */
export async function startStreamSource(opts: { env: Record<string, string>; handle: (event: DynamoDBStreamEvent) => Promise<unknown> }): Promise<StreamSource> {
  const { env } = opts;
  const config = {
    endpoint: env.AWS_ENDPOINT_URL_DYNAMODB,
    region: env.AWS_REGION,
    ...(env.AWS_ACCESS_KEY_ID ? { credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY } } : {}),
  };
  const dynamo = new DynamoDBClient(config);
  const table = await dynamo.send(new DescribeTableCommand({ TableName: env.TABLE_NAME })).finally(() => dynamo.destroy());
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${env.TABLE_NAME} has no stream`);
  const streams = new DynamoDBStreamsClient(config);
  const iterators = new Map<string, string | null>();
  let stopped = false;
  let shardsReadAt = 0;

  const refreshShards = async () => {
    const description = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    for (const shard of description.StreamDescription?.Shards ?? []) {
      if (!shard.ShardId || iterators.has(shard.ShardId)) continue;
      const it = await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shard.ShardId, ShardIteratorType: 'TRIM_HORIZON' }));
      iterators.set(shard.ShardId, it.ShardIterator ?? null);
    }
    shardsReadAt = Date.now();
  };

  const poll = async () => {
    while (!stopped) {
      try {
        if (Date.now() - shardsReadAt > SHARDS_EVERY_MS) await refreshShards();
        for (const [shard, iterator] of iterators) {
          if (!iterator) continue;
          const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
          const records = (page.Records ?? []).filter(matchesFilter);
          if (records.length > 0) await opts.handle({ Records: records as DynamoDBStreamEvent['Records'] });
          iterators.set(shard, page.NextShardIterator ?? null);
        }
      } catch (error) {
        // Kept iterators: the same records are read again next round, as the mapping retries a batch.
        if (!stopped) console.error(JSON.stringify({ level: 'error', msg: 'stream source failed', error: String(error) }));
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  };
  const running = poll();
  return {
    async stop() {
      stopped = true;
      await running;
      streams.destroy();
    },
  };
}

/**
 * The stack's filter patterns applied to a record, for the parts of the pattern language they use:
 * a list of values to match, or `{anything-but: [...]}`.
 */
function matchesFilter(record: _Record): boolean {
  return EVENTS_STREAM_FILTERS.some((pattern) => matches(pattern, record));
}

function matches(pattern: unknown, value: unknown): boolean {
  if (Array.isArray(pattern)) {
    return pattern.some((p) => (typeof p === 'object' && p !== null && 'anything-but' in p ? !(p['anything-but'] as unknown[]).includes(value) : p === value));
  }
  if (typeof pattern === 'object' && pattern !== null) {
    const object = (value ?? {}) as Record<string, unknown>;
    return Object.entries(pattern).every(([key, sub]) => matches(sub, object[key]));
  }
  return false;
}
