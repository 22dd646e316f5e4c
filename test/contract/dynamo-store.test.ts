import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetItemCommand, QueryCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand as DocQueryCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../functions/adapters/aws/dynamo-keys.js';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { DynamoStore, ItemTooLargeError } from '../../functions/adapters/aws/dynamo-store.js';
import { forgetFlowRunModules } from '../../functions/adapters/aws/dynamo-flow-run-modules.js';
import { S3BlobStore } from '../../functions/adapters/aws/s3-blob-store.js';
import type { Job } from '../../functions/ports.js';
import { createTestTable, dynamoClient, type DynamoEndpoint } from '../aws/dynamodb-local.js';
import { testDynamoDb } from '../aws/shared-emulator-endpoints.js';
import { createTestBucket, s3Client, startS3, type S3Endpoint } from '../aws/s3-local.js';
import { describeStoreContract } from './store.contract.js';
import { aJob, anEntity, aScriptVersion, FAR_FUTURE, nextTimestamp, uid } from './store-fixtures.js';

// DynamoDB Local (the run's shared one) and s3rver by default; LocalStack or a real account when SVC_TEST_AWS_ENDPOINT is set.
let dynamo: DynamoEndpoint | undefined;
let s3: S3Endpoint | undefined;
let client: DynamoDBClient;
let s3client: S3Client;

beforeAll(async () => {
  [dynamo, s3] = await Promise.all([testDynamoDb(), startS3()]);
  client = dynamoClient(dynamo.endpoint);
  s3client = s3Client(s3.endpoint);
}, 120_000);

afterAll(async () => {
  client?.destroy();
  s3client?.destroy();
  await Promise.all([dynamo?.stop(), s3?.stop()]);
});

/** A table and, with `offload`, a bucket for the payloads that do not fit an item. */
async function makeStore(offload: boolean) {
  const table = await createTestTable(client);
  const bucket = offload ? await createTestBucket(s3client) : undefined;
  const blobs = bucket ? new S3BlobStore({ client: s3client, bucketName: bucket.bucketName }) : undefined;
  return {
    store: new DynamoStore({ client, tableName: table.tableName, blobs }),
    tableName: table.tableName,
    bucketName: bucket?.bucketName ?? '',
    cleanup: async () => {
      await Promise.all([table.drop(), bucket?.drop()]);
    },
  };
}

describeStoreContract('DynamoStore', () => makeStore(false));
describeStoreContract('DynamoStore with S3 offload', () => makeStore(true));

const KB = 1024;
const MB = 1024 * KB;

/** `bytes` of varied text (multi-byte characters included) starting with `tag`, so no two are alike. */
function text(tag: string, bytes: number): string {
  const unit = `${tag} ünïcødé ✓ line of text\n`;
  return unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit))).slice(0, bytes);
}

describe('DynamoStore with S3 offload: large payloads', () => {
  let h: Awaited<ReturnType<typeof makeStore>>;
  beforeAll(async () => {
    h = await makeStore(true);
  });
  afterAll(async () => h?.cleanup());

  /** Every object under `prefix`, with its body as text. */
  async function objectsUnder(prefix: string): Promise<{ key: string; body: string }[]> {
    const listed = await s3client.send(new ListObjectsV2Command({ Bucket: h.bucketName, Prefix: prefix }));
    return Promise.all(
      (listed.Contents ?? []).map(async (o) => {
        const object = await s3client.send(new GetObjectCommand({ Bucket: h.bucketName, Key: o.Key! }));
        return { key: o.Key!, body: (await object.Body?.transformToString('utf-8')) ?? '' };
      }),
    );
  }

  const jobObjects = (id: string) => objectsUnder(`_store/jobs/${id}/`);

  async function rawJobItem(id: string): Promise<string> {
    const r = await client.send(new GetItemCommand({ TableName: h.tableName, Key: { pk: { S: `JOB#${id}` }, sk: { S: 'JOB' } }, ConsistentRead: true }));
    return JSON.stringify(r.Item ?? {});
  }

  async function running(overrides: Partial<Job> = {}): Promise<Job> {
    const job = aJob(uid('ws'), overrides);
    await h.store.insertJob(job);
    return (await h.store.claimJob(job.id, nextTimestamp(), FAR_FUTURE))!;
  }

  it("keeps a flow run's state past an item's size (a 5,000-item loop with its results) in S3: create, replace, get, list, delete", async () => {
    const ws = uid('ws');
    const items = Array.from({ length: 5_000 }, (_, i) => ({ i, name: `item ${i}`, result: text(`r${i}`, 100) }));
    const run = anEntity('flow_run', ws, 'flow-job-1', { value: { status: 'running', loop: { items, results: [] as unknown[] } } });
    expect(await h.store.createEntity(run)).toBe(true);
    expect(await h.store.getEntity('flow_run', ws, 'flow-job-1')).toEqual(run);
    const first = await objectsUnder(`_store/entities/${ws}/`);
    expect(first).toHaveLength(1);

    const next = { ...run, value: { status: 'running', loop: { items, results: items.map((x) => x.result) } }, version: run.version + 1, updated_at: nextTimestamp() };
    expect(await h.store.replaceEntity(next, run.version)).toBe(true);
    // A stale replace loses its condition and leaves the stored state as it was.
    expect(await h.store.replaceEntity({ ...next, value: { status: 'lost' } }, run.version)).toBe(false);
    expect(await h.store.getEntity('flow_run', ws, 'flow-job-1')).toEqual(next);
    expect(await h.store.listEntities('flow_run', ws)).toEqual([next]);
    // The replaced version's object is blanked: only the current one holds the state.
    expect((await objectsUnder(`_store/entities/${ws}/`)).filter((o) => o.body !== '')).toHaveLength(1);

    expect(await h.store.deleteEntity('flow_run', ws, 'flow-job-1')).toBe(true);
    expect((await objectsUnder(`_store/entities/${ws}/`)).filter((o) => o.body !== '')).toHaveLength(0);
  });

  it('round-trips 1 MB of args through insert, claim, get and list', async () => {
    const job = aJob(uid('ws'), { args: { blob: text('args', MB), n: 1, nested: { list: [1, 'two', null] } } });
    await h.store.insertJob(job);
    expect(await h.store.getJob(job.workspace_id, job.id)).toEqual(job);
    const claimed = await h.store.claimJob(job.id, nextTimestamp(), FAR_FUTURE);
    expect(claimed?.args).toEqual(job.args);
    expect(await h.store.listJobs({ workspace_id: job.workspace_id, limit: 10 })).toEqual([claimed]);
    expect((await rawJobItem(job.id)).length).toBeLessThan(10 * KB);
  });

  it('round-trips a 1 MB result and 2 MB of logs, whether they go to S3 together or alone', async () => {
    const big = { rows: [text('result', MB)], note: null, n: 12345678901 };
    const logs = text('logs', 2 * MB);
    for (const c of [
      { result: big, logs },
      { result: big, logs: 'short logs\n' },
      { result: 'small', logs },
    ]) {
      const job = await running();
      expect(await h.store.completeJob(job.id, { status: 'success', ...c }, nextTimestamp())).toBe(true);
      expect(await h.store.getJob(job.workspace_id, job.id)).toMatchObject({ status: 'success', success: true, result: c.result, logs: c.logs });
    }
  });

  it('keeps the first completion when a second one loses, and blanks what the loser wrote', async () => {
    const job = await running();
    const first = { status: 'canceled' as const, result: text('first', 500 * KB), logs: '' };
    expect(await h.store.completeJob(job.id, first, nextTimestamp())).toBe(true);
    expect(await h.store.completeJob(job.id, { status: 'success', result: text('second', 500 * KB), logs: text('late', 300 * KB) }, nextTimestamp())).toBe(false);
    expect(await h.store.getJob(job.workspace_id, job.id)).toMatchObject({ status: 'canceled', result: first.result, logs: '' });
    const nonEmpty = (await jobObjects(job.id)).filter((o) => o.body !== '');
    expect(nonEmpty).toHaveLength(1);
    expect(nonEmpty[0].body).toBe(JSON.stringify(first.result));
  });

  it('keeps small jobs entirely in the item', async () => {
    const job = await running();
    await h.store.appendJobStream(job.id, 'chunk');
    await h.store.completeJob(job.id, { status: 'success', result: { ok: true }, logs: 'ok\n' }, nextTimestamp());
    expect(await jobObjects(job.id)).toEqual([]);
  });

  it('lets a stream grow to 1 MB in chunks of any size, in order, readable all along', async () => {
    const job = await running();
    const sizes = [1, 700, 5 * KB, 20 * KB, 70 * KB, 3, 200 * KB, 9 * KB];
    let expected = '';
    for (let i = 0; expected.length < MB; i++) {
      const chunk = text(`c${i}`, sizes[i % sizes.length]);
      await h.store.appendJobStream(job.id, chunk);
      expected += chunk;
      if (i % 5 === 0) expect((await h.store.getJob(job.workspace_id, job.id))?.result_stream).toBe(expected);
    }
    expect(await h.store.getJob(job.workspace_id, job.id)).toMatchObject({ result_stream: expected, streaming: true, status: 'running' });
    expect((await rawJobItem(job.id)).length).toBeLessThan(100 * KB);
    await h.store.completeJob(job.id, { status: 'success', result: null, logs: '' }, nextTimestamp());
    await h.store.appendJobStream(job.id, text('too late', 100 * KB));
    expect((await h.store.getJob(job.workspace_id, job.id))?.result_stream).toBe(expected);
  });

  it('scrubs offloaded args, result, logs and stream: nothing is left readable', async () => {
    const secret = 'SECRET-MARKER';
    const job = await running({ args: { blob: text(`${secret} args`, MB) } });
    for (let i = 0; i < 12; i++) await h.store.appendJobStream(job.id, text(`${secret} stream ${i}`, 30 * KB));
    await h.store.completeJob(job.id, { status: 'success', result: text(`${secret} result`, MB), logs: text(`${secret} logs`, 2 * MB) }, nextTimestamp());
    expect((await jobObjects(job.id)).filter((o) => o.body.includes(secret)).length).toBeGreaterThanOrEqual(4);

    await h.store.scrubJob(job.id);
    expect(await h.store.getJob(job.workspace_id, job.id)).toMatchObject({ args: null, result: null, logs: '', result_stream: '', deleted: true, status: 'success' });
    expect((await jobObjects(job.id)).filter((o) => o.body !== '')).toEqual([]);
    expect(await rawJobItem(job.id)).not.toContain(secret);
    await h.store.scrubJob(job.id);
  });

  it('round-trips a 600 KB script by path, by hash and in the listing, and replaces it with a small one', async () => {
    const ws = uid('ws');
    const big = aScriptVersion(ws, 'f/big/script', { content: text('// code', 600 * KB) });
    const bigSchema = aScriptVersion(ws, 'f/big/schema', {
      schema: { type: 'object', properties: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`p${i}`, { type: 'string', description: text('d', 60) }])), required: [] },
    });
    expect(await h.store.insertScriptVersion(big, null)).toBe(true);
    expect(await h.store.insertScriptVersion(bigSchema, null)).toBe(true);
    expect(await h.store.getLatestScript(ws, big.path)).toEqual(big);
    expect(await h.store.getScriptByHash(ws, big.hash)).toEqual(big);
    expect(await h.store.getScriptByHash(ws, bigSchema.hash)).toEqual(bigSchema);
    expect(await h.store.listLatestScripts(ws)).toEqual([bigSchema, big]);

    const small = aScriptVersion(ws, big.path, { parent_hash: big.hash });
    expect(await h.store.insertScriptVersion(small, big.hash)).toBe(true);
    expect(await h.store.getLatestScript(ws, big.path)).toEqual(small);
    expect(await h.store.getScriptByHash(ws, big.hash)).toEqual(big);
    // A version that lost the race leaves no readable object behind.
    const loser = aScriptVersion(ws, big.path, { parent_hash: big.hash, content: text('// lost', 600 * KB) });
    expect(await h.store.insertScriptVersion(loser, big.hash)).toBe(false);
    expect(await h.store.getScriptByHash(ws, loser.hash)).toBeNull();

    expect(await h.store.deleteScriptPath(ws, big.path)).toBe(2);
    expect(await h.store.getScriptByHash(ws, big.hash)).toBeNull();
    const left = (await objectsUnder(`_store/scripts/${ws}/`)).filter((o) => o.body !== '');
    expect(left.map((o) => o.key)).toEqual([expect.stringContaining(`/${bigSchema.hash}/schema-`)]);
  });

  it("round-trips a version whose dependency lock alone is past an item's size (npm's lock of a large tree), and blanks it with its path", async () => {
    // What resolving a script's imports writes: npm's package-lock.json of the whole tree, never
    // bounded by the API. It was stored inline beside the content, and the version's item passed
    // DynamoDB's 400 KB: the create failed with a 500.
    const ws = uid('ws');
    const lock = JSON.stringify({
      lockfileVersion: 3,
      packages: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`node_modules/p${i}`, { version: '1.0.0', resolved: `https://registry.npmjs.org/p${i}/-/p${i}-1.0.0.tgz`, integrity: `sha512-${text(`i${i}`, 88)}` }])),
    });
    expect(Buffer.byteLength(lock)).toBeGreaterThan(400 * KB);
    const v = aScriptVersion(ws, 'f/deps/big_lock', { lock });
    expect(await h.store.insertScriptVersion(v, null)).toBe(true);
    expect(await h.store.getLatestScript(ws, v.path)).toEqual(v);
    expect(await h.store.getScriptByHash(ws, v.hash)).toEqual(v);
    expect(await h.store.listLatestScripts(ws)).toEqual([v]);
    // A small lock next stays inline, and the head no longer names the big one.
    const next = aScriptVersion(ws, v.path, { parent_hash: v.hash, lock: '{"lockfileVersion":3,"packages":{}}' });
    expect(await h.store.insertScriptVersion(next, v.hash)).toBe(true);
    expect(await h.store.getLatestScript(ws, v.path)).toEqual(next);
    expect(await h.store.getScriptByHash(ws, v.hash)).toEqual(v);
    expect((await objectsUnder(`_store/scripts/${ws}/${v.hash}/`)).map((o) => o.key)).toEqual([expect.stringContaining('/lock-')]);

    expect(await h.store.deleteScriptPath(ws, v.path)).toBe(2);
    expect((await objectsUnder(`_store/scripts/${ws}/`)).filter((o) => o.body !== '')).toEqual([]);
  });
});

// Without a BlobStore, and the limits only the DynamoDB shell has: the 400 KB item and the 100-item transaction.
describe("DynamoStore: a flow run's modules kept apart from the run", () => {
  it('stores them once, reads them back in another process, and lists runs without them', async () => {
    const h = await makeStore(false);
    const ws = uid('ws');
    const modules = [{ id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1 }', input_transforms: {} } }];
    const run = anEntity('flow_run', ws, 'flow-job-1', { value: { modules, failure_module: { id: 'failure', value: { type: 'identity' } }, results: {}, index: 0 } });
    expect(await h.store.createEntity(run)).toBe(true);
    const next = { ...run, value: { ...run.value, results: { a: 1 }, index: 1 }, version: 2 };
    expect(await h.store.replaceEntity(next, 1)).toBe(true);

    // The run item rewritten each turn holds a reference, not the modules.
    const item = (await DynamoDBDocumentClient.from(client).send(new GetCommand({ TableName: h.tableName, Key: keys.entity('flow_run', ws, 'flow-job-1') }))).Item;
    expect(JSON.stringify(item)).not.toContain('export function main');

    forgetFlowRunModules();
    expect(await h.store.getEntity('flow_run', ws, 'flow-job-1')).toEqual(next);
    expect(await h.store.listEntities('flow_run', ws)).toEqual([next]);

    // Deleting the run (retention, delete_after_use) leaves nothing of it in its partition.
    expect(await h.store.deleteEntity('flow_run', ws, 'flow-job-1')).toBe(true);
    const left = await DynamoDBDocumentClient.from(client).send(
      new DocQueryCommand({ TableName: h.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.entity('flow_run', ws, 'flow-job-1').pk } }),
    );
    expect((left.Items ?? []).filter((i) => String(i.sk).startsWith(String(keys.entity('flow_run', ws, 'flow-job-1').sk)))).toEqual([]);
  });
});

describe('DynamoStore limits', () => {
  let store: DynamoStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ store, cleanup: drop } = await makeStore(false));
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

    const ws = uid('ws');
    const script = aScriptVersion(ws, 'f/too/big', { content: 'z'.repeat(600 * 1024) });
    await expect(store.insertScriptVersion(script, null)).rejects.toThrow(ItemTooLargeError);
    expect(await store.getLatestScript(ws, script.path)).toBeNull();
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

describe('DynamoStore: jobs stored before flow_version existed', () => {
  let h: Awaited<ReturnType<typeof makeStore>>;
  beforeAll(async () => {
    h = await makeStore(false);
  });
  afterAll(async () => h?.cleanup());

  /** Rewrites a job item as the previous release stored it: no flow_version or flow_module, the version packed into script_hash. */
  async function storeAsBefore(job: Job, packedHash: string) {
    const doc = DynamoDBDocumentClient.from(client);
    const key = keys.job(job.id);
    const { Item } = await doc.send(new GetCommand({ TableName: h.tableName, Key: key }));
    expect(Item).toBeDefined();
    const { flow_version: _v, flow_module: _m, ...legacy } = Item!;
    await doc.send(new PutCommand({ TableName: h.tableName, Item: { ...legacy, script_hash: packedHash } }));
  }

  it('reads a legacy flow job and flow step in the new shape', async () => {
    const ws = uid('ws');
    const flow = aJob(ws, { kind: 'flow', script_hash: null, flow_version: 17 });
    const step = aJob(ws, { kind: 'flowstep', parent_job: flow.id, script_hash: null, flow_version: 17, flow_module: 'ask' });
    await h.store.insertJob(flow);
    await h.store.insertJob(step);
    await storeAsBefore(flow, '17');
    await storeAsBefore(step, '17:ask');
    expect(await h.store.getJob(ws, flow.id)).toEqual(flow);
    expect(await h.store.getJob(ws, step.id)).toEqual(step);
  });
});

// Issue 34: a chatty job's live log must not rewrite its job item at every flush.
describe('DynamoStore: live logs as chunk items', () => {
  let h: Awaited<ReturnType<typeof makeStore>>;
  beforeAll(async () => {
    h = await makeStore(false);
  });
  afterAll(async () => h?.cleanup());

  const rawJobItem = async (id: string) => (await client.send(new GetItemCommand({ TableName: h.tableName, Key: { pk: { S: `JOB#${id}` }, sk: { S: 'JOB' } }, ConsistentRead: true }))).Item;
  const chunkItems = async (id: string) =>
    (await client.send(new QueryCommand({ TableName: h.tableName, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :log)', ExpressionAttributeValues: { ':pk': { S: `JOB#${id}` }, ':log': { S: 'LOG#' } }, Select: 'COUNT', ConsistentRead: true }))).Count;

  it("stores each chunk as an item of its own, read back in order across pages, and never rewrites the job item", async () => {
    const inserted = aJob(uid('ws'));
    await h.store.insertJob(inserted);
    const job = (await h.store.claimJob(inserted.id, nextTimestamp(), FAR_FUTURE))!;
    const before = await rawJobItem(job.id);

    // 400 flushes of a chatty job, then three of nearly an item each: more than one 1 MB query page.
    let expected = '';
    for (let i = 0; i < 400; i++) {
      const chunk = `line ${i} ✓\n`;
      await h.store.appendJobLogs(job.id, chunk);
      expected += chunk;
    }
    for (let i = 0; i < 3; i++) {
      const chunk = text(`big${i}`, 380 * KB);
      await h.store.appendJobLogs(job.id, chunk);
      expected += chunk;
    }

    expect(await rawJobItem(job.id)).toEqual(before);
    expect(await chunkItems(job.id)).toBe(403);
    const read = await h.store.getJob(job.workspace_id, job.id);
    expect(read?.logs.length).toBe(expected.length);
    expect(read?.logs === expected).toBe(true);

    // Completion stores the full text on the job; the chunks are then ignored, and expire.
    await h.store.completeJob(job.id, { status: 'success', result: null, logs: 'the full text\n' }, nextTimestamp());
    expect((await h.store.getJob(job.workspace_id, job.id))?.logs).toBe('the full text\n');
    // Deleting the job's data (retention) deletes them at once.
    await h.store.scrubJob(job.id);
    expect(await chunkItems(job.id)).toBe(0);
  });
});
