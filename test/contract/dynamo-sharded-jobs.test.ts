import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoStore } from '../../functions/adapters/aws/dynamo-store.js';
import { GSI1, GSI3, gsi1, gsi2, gsi3, keys } from '../../functions/adapters/aws/dynamo-keys.js';
import { jobItem } from '../../functions/adapters/aws/dynamo-items.js';
import type { Job, JobQuery } from '../../functions/ports.js';
import { createTestTable, dynamoClient, startDynamoDb, type DynamoEndpoint } from '../aws/dynamodb-local.js';
import { aJob, eventually, FAR_FUTURE, nextTimestamp, uid } from './store-fixtures.js';

/**
 * A workspace's job list and the unfinished-status index are sharded (dynamo-keys.ts): the lists
 * read every shard and merge them, so what a user pages through is the same one newest-first
 * order; jobs stored with the unsharded keys of older versions stay listed.
 */

let dynamo: DynamoEndpoint | undefined;
let client: DynamoDBClient;
let doc: DynamoDBDocumentClient;
let table: Awaited<ReturnType<typeof createTestTable>>;
let store: DynamoStore;

beforeAll(async () => {
  dynamo = await startDynamoDb();
  client = dynamoClient(dynamo.endpoint);
  doc = DynamoDBDocumentClient.from(client);
  table = await createTestTable(client);
  store = new DynamoStore({ client, tableName: table.tableName });
}, 120_000);

afterAll(async () => {
  await table?.drop();
  client?.destroy();
  await dynamo?.stop();
});

const ids = (jobs: Job[]) => jobs.map((j) => j.id);

/** Every page of the run list, `limit` at a time, following the cursor the console passes on. */
async function allPages(q: Omit<JobQuery, 'limit' | 'after'>, limit: number): Promise<Job[]> {
  const seen: Job[] = [];
  let after: JobQuery['after'];
  for (let page = 0; page < 100; page++) {
    const jobs = await store.queryJobs({ ...q, limit, after });
    seen.push(...jobs);
    if (jobs.length < limit) return seen;
    after = { created_at: jobs.at(-1)!.created_at, id: jobs.at(-1)!.id };
  }
  throw new Error('more pages than jobs');
}

/** Writes a job as a version before the sharding did: its index keys unsharded. */
async function putUnsharded(job: Job): Promise<void> {
  const item = { ...jobItem(job, { args_json: JSON.stringify(job.args), result_json: 'null', log_chunks: [], stream_chunks: [], stream_refs: [], stream_bytes: 0, stream_seq: 0 }) };
  item.gsi1pk = `WS#${job.workspace_id}#JOBS`;
  if (item.gsi2pk) item.gsi2pk = `JOBS#${job.status}`;
  await doc.send(new PutCommand({ TableName: table.tableName, Item: item }));
}

describe('DynamoStore: sharded job keys', () => {
  it("spreads a workspace's jobs over its shards, and every list pages through them newest first", async () => {
    const ws = uid('ws');
    const jobs: Job[] = [];
    const same = nextTimestamp();
    for (let i = 0; i < 40; i++) {
      // Two in the same instant: the id decides their order in every shard and across them.
      const job = aJob(ws, { script_path: i % 3 ? 'f/ops/clean' : 'f/data/load', created_at: i === 10 || i === 11 ? same : nextTimestamp() });
      await store.insertJob(job);
      jobs.push(job);
    }
    for (const job of jobs.filter((_, i) => i % 4 === 0)) await store.claimJob(job.id, nextTimestamp(), FAR_FUTURE);
    const newestFirst = [...jobs].sort((a, b) => (a.created_at === b.created_at ? (a.id > b.id ? -1 : 1) : a.created_at > b.created_at ? -1 : 1));

    // The index entries are in several partitions, none of them the unsharded one.
    const partitions = await Promise.all(
      gsi1.jobPartitionsOf(ws).map(async (pk) => {
        const r = await doc.send(new QueryCommand({ TableName: table.tableName, IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': pk } }));
        return r.Items?.length ?? 0;
      }),
    );
    expect(partitions.filter((n) => n > 0).length).toBeGreaterThanOrEqual(5);
    expect(partitions.at(-1)).toBe(0);
    expect(partitions.reduce((a, b) => a + b)).toBe(40);

    await eventually(() => store.queryJobs({ workspace_id: ws, limit: 100 }), (l) => l.length === 40);
    expect(ids(await allPages({ workspace_id: ws }, 7))).toEqual(ids(newestFirst));
    expect(ids(await allPages({ workspace_id: ws, status: 'running' }, 3))).toEqual(ids(newestFirst.filter((j) => jobs.indexOf(j) % 4 === 0)));
    expect(ids(await allPages({ workspace_id: ws, path_prefix: 'f/data/' }, 4))).toEqual(ids(newestFirst.filter((j) => j.script_path === 'f/data/load')));
    expect(ids(await store.listJobs({ workspace_id: ws, limit: 5 }))).toEqual(ids(newestFirst.slice(0, 5)));
    expect(ids(await store.listJobs({ workspace_id: ws, status: 'running', limit: 100 }))).toEqual(ids(newestFirst.filter((j) => jobs.indexOf(j) % 4 === 0)));
    expect(ids(await store.listJobs({ workspace_id: ws, script_path: 'f/data/load', limit: 3 }))).toEqual(ids(newestFirst.filter((j) => j.script_path === 'f/data/load').slice(0, 3)));
  });

  it('keeps listing jobs written with the unsharded keys, and moves them to a shard when they change status', async () => {
    const ws = uid('ws');
    const old = [aJob(ws, { created_at: nextTimestamp() }), aJob(ws, { created_at: nextTimestamp() })];
    for (const job of old) await putUnsharded(job);
    const fresh = aJob(ws, { created_at: nextTimestamp() });
    await store.insertJob(fresh);
    const newestFirst = [fresh, ...old.toReversed()];

    await eventually(() => store.queryJobs({ workspace_id: ws, limit: 100 }), (l) => l.length === 3);
    expect(ids(await allPages({ workspace_id: ws }, 1))).toEqual(ids(newestFirst));
    expect(ids(await store.listJobs({ workspace_id: ws, limit: 10 }))).toEqual(ids(newestFirst));
    const queued = await store.listStaleJobs('queued', FAR_FUTURE, 1_000);
    expect(ids(queued)).toEqual(expect.arrayContaining(ids(newestFirst)));

    // Claimed, an old job's status entry moves to its shard; completed, it leaves the index.
    const [first] = old;
    await store.claimJob(first!.id, nextTimestamp(), FAR_FUTURE);
    const raw = async () => (await doc.send(new GetCommand({ TableName: table.tableName, Key: keys.job(first!.id), ConsistentRead: true }))).Item!;
    expect((await raw()).gsi2pk).toBe(gsi2.status('running', first!.id));
    expect(ids(await store.listStaleJobs('running', FAR_FUTURE, 1_000))).toContain(first!.id);
    expect(await store.completeJob(first!.id, { status: 'success', result: 1, logs: '' }, nextTimestamp())).toBe(true);
    expect((await raw()).gsi2pk).toBeUndefined();
    expect(ids(await store.listStaleJobs('running', FAR_FUTURE, 1_000))).not.toContain(first!.id);
    // Its list entry stays where it was written: still listed, now finished.
    expect((await store.listJobs({ workspace_id: ws, status: 'success', limit: 10 })).map((j) => j.id)).toEqual([first!.id]);
  });

  it("serves a workspace's running flows from their own index: only running flows in it, paged newest first", async () => {
    const ws = uid('ws');
    const flow = (status: Job['status']) => aJob(ws, { kind: 'flow', status, script_path: 'f/ops/deploy', script_hash: null, flow_version: 1, language: 'nativets', created_at: nextTimestamp() });
    // Many finished runs and running scripts, which the list must not read past, and a few running flows.
    const finished = Array.from({ length: 30 }, () => flow('queued'));
    const scripts = Array.from({ length: 10 }, () => aJob(ws, { created_at: nextTimestamp() }));
    const running = Array.from({ length: 9 }, () => flow('queued'));
    const direct = flow('running'); // stored already running (JobQueue.reserve)
    for (const job of [...finished, ...scripts, ...running]) await store.insertJob(job);
    await store.insertJob({ ...direct, started_at: nextTimestamp() });
    for (const job of [...finished, ...scripts, ...running]) await store.claimJob(job.id, nextTimestamp(), FAR_FUTURE);
    for (const job of finished) await store.completeJob(job.id, { status: 'success', result: 1, logs: '' }, nextTimestamp());
    const expected = [direct, ...running.toReversed()];

    // The index holds the running flows and nothing else, in every shard.
    const entries = await Promise.all(
      gsi3.runningFlowPartitionsOf(ws).map(async (pk) => (await doc.send(new QueryCommand({ TableName: table.tableName, IndexName: GSI3, KeyConditionExpression: 'gsi3pk = :pk', ExpressionAttributeValues: { ':pk': pk } }))).Items ?? []),
    );
    await eventually(async () => entries.flat().length, (n) => n === expected.length);
    expect(new Set(entries.flat().map((i) => i.pk))).toEqual(new Set(expected.map((j) => `JOB#${j.id}`)));

    // Pages of 4 follow the cursor through the shards; the path filter is in the index too.
    expect(ids(await allPages({ workspace_id: ws, status: 'running', kind: 'flow' }, 4))).toEqual(ids(expected));
    expect(ids(await allPages({ workspace_id: ws, status: 'running', kind: 'flow', path_prefix: 'f/other/' }, 4))).toEqual([]);
    expect(ids(await store.listJobs({ workspace_id: ws, status: 'running', kind: 'flow', limit: 100 }))).toEqual(ids(expected));
    expect(ids(await store.listJobs({ workspace_id: ws, status: 'running', kind: 'flow', limit: 3 }))).toEqual(ids(expected.slice(0, 3)));

    // A flow that ends leaves the index; one requeued after a crash too, until claimed again.
    await store.completeJob(expected[0]!.id, { status: 'failed', result: null, logs: '' }, nextTimestamp());
    expect(ids(await store.listJobs({ workspace_id: ws, status: 'running', kind: 'flow', limit: 100 }))).toEqual(ids(expected.slice(1)));
    const raw = async (id: string) => (await doc.send(new GetCommand({ TableName: table.tableName, Key: keys.job(id), ConsistentRead: true }))).Item!;
    expect(await raw(expected[0]!.id)).not.toHaveProperty('gsi3sk');
    expect(await raw(scripts[0]!.id)).not.toHaveProperty('gsi3pk');
  });
});
