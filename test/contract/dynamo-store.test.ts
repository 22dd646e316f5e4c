import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoStore, ItemTooLargeError } from '../../functions/adapters/aws/dynamo-store.js';
import { createTestTable, dynamoClient, startDynamoDb, type DynamoEndpoint } from '../aws/dynamodb-local.js';
import { describeStoreContract } from './store.contract.js';
import { aJob, aScriptVersion, FAR_FUTURE, nextTimestamp, uid } from './store-fixtures.js';

// DynamoDB Local by default; LocalStack or a real account when SVC_TEST_AWS_ENDPOINT is set.
let dynamo: DynamoEndpoint | undefined;
let client: DynamoDBClient;

beforeAll(async () => {
  dynamo = await startDynamoDb();
  client = dynamoClient(dynamo.endpoint);
}, 120_000);

afterAll(async () => {
  client?.destroy();
  await dynamo?.stop();
});

describeStoreContract('DynamoStore', async () => {
  const table = await createTestTable(client);
  return { store: new DynamoStore({ client, tableName: table.tableName }), cleanup: table.drop };
});

// Limits only the DynamoDB shell has: the 400 KB item and the 100-item transaction.
describe('DynamoStore limits', () => {
  let store: DynamoStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const table = await createTestTable(client);
    store = new DynamoStore({ client, tableName: table.tableName });
    drop = table.drop;
  });
  afterAll(async () => drop?.());

  it('refuses payloads that will not fit in an item with a clear error, storing nothing', async () => {
    const job = aJob(uid('ws'), { args: { blob: 'x'.repeat(360 * 1024) } });
    await expect(store.insertJob(job)).rejects.toThrow(ItemTooLargeError);
    expect(await store.getJob(job.workspace_id, job.id)).toBeNull();

    const small = aJob(job.workspace_id);
    await store.insertJob(small);
    await store.claimJob(small.id, nextTimestamp(), FAR_FUTURE);
    await expect(store.completeJob(small.id, { status: 'success', result: 'y'.repeat(360 * 1024), logs: '' }, nextTimestamp())).rejects.toThrow(/S3/);
    expect((await store.getJob(small.workspace_id, small.id))?.status).toBe('running');
  });

  it('reports a stream that grows past the item limit as ItemTooLargeError', async () => {
    const job = aJob(uid('ws'));
    await store.insertJob(job);
    await store.claimJob(job.id, nextTimestamp(), FAR_FUTURE);
    const chunk = 'z'.repeat(100 * 1024);
    for (let i = 0; i < 3; i++) await store.appendJobStream(job.id, chunk);
    await expect(store.appendJobStream(job.id, chunk)).rejects.toThrow(ItemTooLargeError);
    expect((await store.getJob(job.workspace_id, job.id))?.result_stream).toHaveLength(3 * chunk.length);
  });

  it('deletes a path with more versions than one transaction holds', async () => {
    const ws = uid('ws');
    let latest: string | null = null;
    const hashes: string[] = [];
    for (let i = 0; i < 120; i++) {
      const v = aScriptVersion(ws, 'f/long/history', { parent_hash: latest, content: `// v${i}` });
      expect(await store.insertScriptVersion(v, latest)).toBe(true);
      hashes.push(v.hash);
      latest = v.hash;
    }
    expect(await store.deleteScriptPath(ws, 'f/long/history')).toBe(120);
    expect(await store.getLatestScript(ws, 'f/long/history')).toBeNull();
    for (const h of [hashes[0], hashes[98], hashes[99], hashes[119]]) expect(await store.getScriptByHash(ws, h)).toBeNull();
  }, 60_000);
});
