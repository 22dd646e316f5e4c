/**
 * Lambda's DynamoDB Streams event source mapping, on one machine: reads the table's stream from
 * its oldest record (DynamoDB Local keeps Streams), keeps the records the mapping's filter
 * patterns keep (when it has any), hands each batch of records to a handler as a
 * DynamoDBStreamEvent, and on a reported batch item failure (or a thrown error) delivers again
 * from that record (the mapping's "retry from the failed sequence number"), up to `retryAttempts`
 * times. The one stream poller of the aws tier: the job dispatcher and the events function both
 * read the stream through it, as their mappings do.
 */
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand, type _Record } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { externalEndpoint } from './dynamodb-local.js';

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

export interface StreamEventSource {
  /** Resolves once every record written so far has been handed to the handler (and retried). */
  drain(): Promise<void>;
  /**
   * Stops reading; no batch is handed over after this. It waits for a batch being handled, unless
   * `abandon`: then that invocation runs on by itself, as when Lambda's environment goes away
   * (the AWS shell server's shutdown, which must not wait out an events invocation's retries).
   */
  stop(opts?: { abandon?: boolean }): Promise<void>;
  /** Polls now instead of waiting out the idle interval: something was just written. */
  wake(): void;
}

export interface StreamSourceOptions {
  dynamo: DynamoDBClient;
  /** A client for the same endpoint, region and credentials (AWS_ENDPOINT_URL_DYNAMODB_STREAMS on AWS). */
  streams: DynamoDBStreamsClient;
  tableName: string;
  handler: StreamHandler;
  /** The mapping's filter patterns (Lambda event filtering, any may match); none: every record. */
  filters?: readonly unknown[];
  /** How soon the next poll follows one that found records (50 ms). */
  pollMs?: number;
  /**
   * The longest wait between polls that find nothing: the wait doubles from `pollMs` up to this
   * (250 ms, the four polls a second Lambda makes of each shard). wake() polls at once.
   */
  idlePollMs?: number;
  retryAttempts?: number;
  onError?: (error: unknown) => void;
}

const DESCRIBE_EVERY_MS = 1_000;

export async function startStreamEventSource(opts: StreamSourceOptions): Promise<StreamEventSource> {
  const table = await opts.dynamo.send(new DescribeTableCommand({ TableName: opts.tableName }));
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${opts.tableName} has no stream`);
  const pollMs = opts.pollMs ?? 50;
  const idlePollMs = Math.max(pollMs, opts.idlePollMs ?? 250);
  /** Ends the wait between polls early (wake()); a wake during a poll makes the next wait none. */
  let endWait: (() => void) | null = null;
  let woken = false;
  const retryAttempts = opts.retryAttempts ?? 3;
  const iterators = new Map<string, string | null>();
  /** The last record read from each shard, where a fresh iterator picks up. */
  const lastRead = new Map<string, string>();
  let stopped = false;
  /** A handler invocation is under way. */
  let handling = false;
  let idleWaiters: Array<() => void> = [];

  const iteratorAt = async (shardId: string): Promise<string | null> => {
    const after = lastRead.get(shardId);
    const position = after ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: after } : { ShardIteratorType: 'TRIM_HORIZON' as const };
    return (await opts.streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ...position }))).ShardIterator ?? null;
  };

  /** When the stream's shards were last listed; a shard only appears when another closes. */
  let describedAt = -Infinity;
  let shardClosed = false;
  const pollOnce = async (): Promise<boolean> => {
    // Listing the shards each poll doubled the emulator's idle load (two requests every 50 ms per
    // consumer, about a fifth of a core per AWS shell doing nothing): listed again when a shard
    // has closed, and once a second in case one was split.
    if (shardClosed || Date.now() - describedAt >= DESCRIBE_EVERY_MS) {
      describedAt = Date.now();
      shardClosed = false;
      const shards = (await opts.streams.send(new DescribeStreamCommand({ StreamArn: streamArn }))).StreamDescription?.Shards ?? [];
      for (const shard of shards) {
        if (!iterators.has(shard.ShardId!)) iterators.set(shard.ShardId!, await iteratorAt(shard.ShardId!));
      }
    }
    let sawRecords = false;
    for (const [shardId, iterator] of iterators) {
      if (stopped) break;
      if (!iterator) continue;
      const page = await opts.streams.send(new GetRecordsCommand({ ShardIterator: iterator })).catch((error: unknown) => {
        // DynamoDB Local numbers stream records across all its tables: an iterator taken on an
        // empty shard is "trimmed" once another table's writes put this shard's first record past
        // it. A fresh one from the last record read (or the shard's start) reads on, skipping nothing.
        if ((error as Error).name === 'TrimmedDataAccessException') return null;
        throw error;
      });
      if (!page) {
        iterators.set(shardId, await iteratorAt(shardId));
        // Not idle: the records behind it are read at once, before drain() may count an idle poll.
        sawRecords = true;
        continue;
      }
      iterators.set(shardId, page.NextShardIterator ?? null);
      if (!page.NextShardIterator) shardClosed = true;
      const read = page.Records ?? [];
      if (read.length > 0) lastRead.set(shardId, read[read.length - 1].dynamodb!.SequenceNumber!);
      const records = read.map((r) => lambdaRecord(r, streamArn)).filter((r) => !opts.filters || opts.filters.some((pattern) => matches(pattern, r)));
      if (records.length === 0) continue;
      sawRecords = true;
      await deliver(records);
    }
    return sawRecords;
  };

  const deliver = async (records: DynamoDBRecord[]): Promise<void> => {
    let pending = records;
    for (let attempt = 0; pending.length > 0 && !stopped; attempt++) {
      handling = true;
      const response = await opts.handler({ Records: pending })
        .catch((error: unknown) => {
          opts.onError?.(error);
          return { batchItemFailures: [{ itemIdentifier: pending[0].dynamodb!.SequenceNumber! }] };
        })
        .finally(() => (handling = false));
      const failed = response?.batchItemFailures?.[0]?.itemIdentifier;
      if (failed === undefined) return;
      if (attempt >= retryAttempts) {
        opts.onError?.(new Error(`stream records from ${failed} failed ${attempt + 1} times; given up`));
        return;
      }
      pending = pending.slice(pending.findIndex((r) => r.dynamodb?.SequenceNumber === failed));
      await new Promise((r) => setTimeout(r, pollMs));
    }
  };

  const loop = (async () => {
    let wait = pollMs;
    while (!stopped) {
      let busy = false;
      woken = false;
      try {
        busy = await pollOnce();
      } catch (error) {
        if (!stopped) opts.onError?.(error);
      }
      if (busy) {
        wait = pollMs;
        continue;
      }
      for (const wake of idleWaiters) wake();
      idleWaiters = [];
      if (woken) {
        wait = pollMs;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        endWait = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      endWait = null;
      wait = woken ? pollMs : Math.min(wait * 2, idlePollMs);
    }
  })();

  return {
    // Twice idle: a poll under way when drain() is called may have started before the last write.
    drain: async () => {
      for (let i = 0; i < 2 && !stopped; i++) {
        const idle = new Promise<void>((resolve) => idleWaiters.push(resolve));
        woken = true;
        endWait?.();
        await idle;
      }
    },
    async stop({ abandon = false } = {}) {
      stopped = true;
      // Without a handler under way, the loop ends with the poll in flight.
      if (!(abandon && handling)) await loop;
      for (const wake of idleWaiters) wake();
      endWait?.();
    },
    wake() {
      woken = true;
      endWait?.();
    },
  };
}

/** Like dynamoClient (dynamodb-local.ts): the emulator's fake credentials, else the usual chain. */
export function streamsClient(endpoint: string): DynamoDBStreamsClient {
  const external = externalEndpoint() !== null;
  const useRealCredentials = external && Boolean(process.env.AWS_ACCESS_KEY_ID || process.env.AWS_PROFILE);
  return new DynamoDBStreamsClient({
    endpoint,
    region: external ? (process.env.AWS_REGION ?? 'us-east-1') : 'us-east-1',
    ...(useRealCredentials ? {} : { credentials: { accessKeyId: 'svctest', secretAccessKey: 'svctest' } }),
  });
}

/** A stream record as Lambda hands it over (AttributeValue maps, epoch seconds). */
function lambdaRecord(r: _Record, streamArn: string): DynamoDBRecord {
  const d = r.dynamodb ?? {};
  return {
    eventID: r.eventID,
    eventName: r.eventName as DynamoDBRecord['eventName'],
    eventVersion: r.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: r.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      ApproximateCreationDateTime: d.ApproximateCreationDateTime ? d.ApproximateCreationDateTime.getTime() / 1000 : undefined,
      Keys: d.Keys as never,
      NewImage: d.NewImage as never,
      OldImage: d.OldImage as never,
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType as never,
    },
  };
}

/**
 * A filter pattern applied to a record, for the parts of the pattern language the stack uses: a
 * list of values to match, or `{anything-but: [...]}`.
 */
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
