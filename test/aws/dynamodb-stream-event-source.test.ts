import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import { createTestTable, dynamoClient, type DynamoEndpoint } from './dynamodb-local.js';
import { startStreamEventSource, streamsClient, type StreamEventSource } from './dynamodb-stream-event-source.js';
import { testDynamoDb } from './shared-emulator-endpoints.js';

/**
 * The stream mapping's stand-in on a DynamoDB Local that several tables share (the test run's one):
 * DynamoDB Local numbers stream records across all its tables, and calls an iterator taken on a
 * table's empty stream "trimmed" once another table's writes push that table's first record past
 * it. The mapping still hands over every record, once.
 */

let dynamo: DynamoEndpoint;
let client: DynamoDBClient;
let streams: DynamoDBStreamsClient;
const tables: Array<{ tableName: string; drop(): Promise<void> }> = [];
const sources: StreamEventSource[] = [];

beforeAll(async () => {
  dynamo = await testDynamoDb();
  client = dynamoClient(dynamo.endpoint);
  streams = streamsClient(dynamo.endpoint);
}, 120_000);

afterAll(async () => {
  for (const source of sources) await source.stop();
  await Promise.allSettled(tables.map((t) => t.drop()));
  client?.destroy();
  streams?.destroy();
  await dynamo?.stop();
});

async function table(): Promise<string> {
  const created = await createTestTable(client);
  tables.push(created);
  return created.tableName;
}

const put = (tableName: string, pk: string) => client.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: pk }, sk: { S: 'item' } } }));

describe('the DynamoDB stream event source', () => {
  it('delivers the records of a table whose stream was empty while another table on the same DynamoDB Local was written', async () => {
    const watched = await table();
    const other = await table();
    const seen: DynamoDBRecord[] = [];
    const source = await startStreamEventSource({ dynamo: client, streams, tableName: watched, handler: async (event) => void seen.push(...event.Records) });
    sources.push(source);
    // The source has read the empty stream: its iterator stands at the shard's start.
    await source.drain();
    for (let i = 0; i < 5; i++) await put(other, `other-${i}`);
    await put(watched, 'first');
    await put(watched, 'second');
    await source.drain();
    expect(seen.map((r) => r.dynamodb?.Keys?.pk)).toEqual([{ S: 'first' }, { S: 'second' }]);

    // And it goes on from there, every record once.
    for (let i = 5; i < 10; i++) await put(other, `other-${i}`);
    await put(watched, 'third');
    await source.drain();
    expect(seen.map((r) => r.dynamodb?.Keys?.pk)).toEqual([{ S: 'first' }, { S: 'second' }, { S: 'third' }]);
  });

  it('stops with abandon while a batch is being handled, leaving that invocation to run on and handing over nothing more', async () => {
    const watched = await table();
    const handled: string[] = [];
    let started!: () => void;
    const handling = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const source = await startStreamEventSource({
      dynamo: client,
      streams,
      tableName: watched,
      handler: async (event) => {
        handled.push(...event.Records.map((r) => r.dynamodb!.Keys!.pk.S!));
        started();
        // Like an events invocation waiting out a webhook's near retries.
        await released;
      },
    });
    sources.push(source);
    await put(watched, 'held');
    await handling;

    await source.stop({ abandon: true });
    await put(watched, 'after-stop');
    release();
    // The source is stopped: whatever it was doing is over once a stop that waits returns.
    await source.stop();
    expect(handled).toEqual(['held']);
  });
});
