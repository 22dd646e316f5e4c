import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
  paginateQuery,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Job, JobCompletion, JobListFilter, JobStatus, ScriptVersion, Store, TokenRecord, User, Workspace } from '../../ports.js';
import { GSI1, GSI2, SCRIPT_HEAD_PREFIX, gsi1, gsi2, keys } from './dynamo-keys.js';
import {
  assertFits, jobItem, scriptHeadUpdate, scriptVersionItem, toJob, toScript, toToken, toUser, toWorkspace, tokenItem, userItem, workspaceItem, type Item,
} from './dynamo-items.js';
import { batchDelete, batchGet, isConditionFailure, transactionFailures, translateSizeError } from './dynamo-ops.js';

/** Every JobStatus not in FINISHED_STATUSES: the states completeJob may leave. */
const UNFINISHED = ['queued', 'running', 'suspended', 'awaiting_approval'] as const satisfies readonly JobStatus[];

/**
 * The AWS shell's state in one DynamoDB table (layout in dynamo-keys.ts). Every state change the
 * core races on is a conditional write, so SQS redeliveries and concurrent API calls resolve in
 * the database: one claim wins, a finished job stays finished, a script version names its parent.
 */
export class DynamoStore implements Store {
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;

  constructor(opts: { client: DynamoDBClient; tableName: string }) {
    this.doc = DynamoDBDocumentClient.from(opts.client, { marshallOptions: { removeUndefinedValues: true } });
    this.table = opts.tableName;
  }

  async createWorkspace(ws: Workspace) {
    return (await this.putIfAbsent(workspaceItem(ws))) ? ('created' as const) : ('exists' as const);
  }

  async getWorkspace(id: string) {
    const item = await this.get(keys.workspace(id));
    return item ? toWorkspace(item) : null;
  }

  async listWorkspaces() {
    const refs = await this.queryAll({ IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': gsi1.workspaces() } });
    return (await batchGet(this.doc, this.table, refs)).map(toWorkspace);
  }

  async setObjectStorage(id: string, enabled: boolean) {
    await this.updateIfExists(keys.workspace(id), 'SET object_storage_enabled = :on', { ':on': enabled });
  }

  async insertScriptVersion(v: ScriptVersion, expectedLatest: string | null) {
    // One transaction: the version exists exactly when the head moved to it, and the head moves
    // only from the hash the caller saw (null: only onto a free path).
    const head = {
      Update: {
        TableName: this.table,
        Key: keys.scriptHead(v.workspace_id, v.path),
        ...scriptHeadUpdate(v),
        ConditionExpression: expectedLatest === null ? 'attribute_not_exists(pk)' : '#hash = :expected',
      },
    };
    if (expectedLatest !== null) head.Update.ExpressionAttributeValues[':expected'] = expectedLatest;
    const version = { Put: { TableName: this.table, Item: scriptVersionItem(v), ConditionExpression: 'attribute_not_exists(pk)' } };
    try {
      await this.doc.send(new TransactWriteCommand({ TransactItems: [version, head] }));
      return true;
    } catch (e) {
      const [versionFailure] = transactionFailures(e) ?? [];
      if (versionFailure === undefined) throw e;
      if (versionFailure === 'ConditionalCheckFailed') throw new Error(`script version ${v.hash} already exists in ${v.workspace_id}`);
      // The head moved (or a concurrent transaction was touching it): another version won.
      return false;
    }
  }

  async getLatestScript(workspaceId: string, path: string) {
    const item = await this.get(keys.scriptHead(workspaceId, path));
    return item ? toScript(item) : null;
  }

  async getScriptByHash(workspaceId: string, hash: string) {
    const item = await this.get(keys.scriptVersion(workspaceId, hash));
    return item ? toScript(item) : null;
  }

  async listLatestScripts(workspaceId: string) {
    const { pk } = keys.scriptHead(workspaceId, '');
    const heads = await this.queryAll({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': SCRIPT_HEAD_PREFIX },
      ConsistentRead: true,
    });
    return heads.map(toScript);
  }

  async deleteScriptPath(workspaceId: string, path: string) {
    // Retried when a new version lands between reading the head and deleting it.
    for (let attempt = 1; ; attempt++) {
      const head = await this.get(keys.scriptHead(workspaceId, path));
      if (!head) return 0;
      const hashes = [...(head.version_hashes as Set<string>)];
      // Head and up to 99 versions go in one transaction (the limit is 100 items), so a usual
      // delete is atomic; a longer history's remaining versions follow in batches.
      const atomic = hashes.slice(0, 99);
      try {
        await this.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Delete: {
                  TableName: this.table,
                  Key: keys.scriptHead(workspaceId, path),
                  ConditionExpression: '#hash = :seen',
                  ExpressionAttributeNames: { '#hash': 'hash' },
                  ExpressionAttributeValues: { ':seen': head.hash },
                },
              },
              ...atomic.map((h) => ({ Delete: { TableName: this.table, Key: keys.scriptVersion(workspaceId, h) } })),
            ],
          }),
        );
      } catch (e) {
        if (transactionFailures(e) && attempt < 5) continue;
        throw e;
      }
      await batchDelete(this.doc, this.table, hashes.slice(99).map((h) => keys.scriptVersion(workspaceId, h)));
      return hashes.length;
    }
  }

  async insertJob(job: Job) {
    await this.doc.send(new PutCommand({ TableName: this.table, Item: jobItem(job), ConditionExpression: 'attribute_not_exists(pk)' }));
  }

  async getJob(workspaceId: string, id: string) {
    const item = await this.get(keys.job(id));
    return item && item.workspace_id === workspaceId ? toJob(item) : null;
  }

  async listJobs(f: JobListFilter) {
    const filters: string[] = [];
    const values: Item = { ':pk': gsi1.jobsOf(f.workspace_id) };
    if (f.status) (filters.push('#status = :status'), (values[':status'] = f.status));
    if (f.script_path) (filters.push('script_path = :path'), (values[':path'] = f.script_path));
    const refs: Item[] = [];
    const pages = paginateQuery(
      { client: this.doc },
      {
        TableName: this.table,
        IndexName: GSI1,
        KeyConditionExpression: 'gsi1pk = :pk',
        ...(filters.length ? { FilterExpression: filters.join(' AND '), ExpressionAttributeNames: f.status ? { '#status': 'status' } : undefined } : {}),
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
        // Limit counts items read before the filter, so read at least a page's worth each time.
        Limit: Math.max(f.limit, 100),
      },
    );
    for await (const page of pages) {
      refs.push(...(page.Items ?? []));
      if (refs.length >= f.limit) break;
    }
    // The index is eventually consistent: read the jobs themselves and apply the filter again.
    const jobs = (await batchGet(this.doc, this.table, refs.slice(0, f.limit))).map(toJob);
    return jobs.filter((j) => (!f.status || j.status === f.status) && (!f.script_path || j.script_path === f.script_path));
  }

  async claimJob(id: string, startedAt: string, leaseUntil: string) {
    try {
      const r = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.job(id),
          UpdateExpression: 'SET #status = :running, started_at = :startedAt, lease_until = :leaseUntil, attempts = attempts + :one, gsi2pk = :gsi2pk',
          // ISO timestamps compare as strings; an item without a lease is never reclaimed.
          ConditionExpression: '#status = :queued OR (#status = :running AND lease_until < :startedAt)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':running': 'running',
            ':queued': 'queued',
            ':startedAt': startedAt,
            ':leaseUntil': leaseUntil,
            ':one': 1,
            ':gsi2pk': gsi2.status('running'),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toJob(r.Attributes!);
    } catch (e) {
      if (isConditionFailure(e)) return null;
      throw e;
    }
  }

  async appendJobStream(id: string, chunk: string) {
    // Only a running job streams: a chunk arriving after completion or cancel is dropped.
    await this.updateJob(id, 'SET stream_chunks = list_append(stream_chunks, :chunk), streaming = :true', '#status = :running', {
      ':chunk': [chunk],
      ':true': true,
      ':running': 'running',
    });
  }

  async completeJob(id: string, c: JobCompletion, completedAt: string) {
    const resultJson = JSON.stringify(c.result ?? null);
    assertFits(`job ${id}: result and logs`, resultJson, c.logs);
    // Leaving the unfinished states also takes the job out of the sparse status index.
    return this.updateJob(
      id,
      'SET #status = :status, success = :success, result_json = :result, log_chunks = :logs, completed_at = :completedAt REMOVE gsi2pk, gsi2sk',
      `#status IN (${UNFINISHED.map((_, i) => `:u${i}`).join(', ')})`,
      {
        ':status': c.status,
        ':success': c.status === 'success',
        ':result': resultJson,
        ':logs': c.logs ? [c.logs] : [],
        ':completedAt': completedAt,
        ...Object.fromEntries(UNFINISHED.map((s, i) => [`:u${i}`, s])),
      },
    );
  }

  async scrubJob(id: string) {
    await this.updateJob(
      id,
      'SET args_json = :null, result_json = :nullJson, log_chunks = :empty, stream_chunks = :empty, deleted = :true',
      'attribute_exists(pk)',
      { ':null': null, ':nullJson': 'null', ':empty': [], ':true': true },
    );
  }

  async requeueInterrupted() {
    // The sparse index holds only unfinished jobs; a job claimed a moment ago may not be in it yet,
    // which a start-up sweep can afford (its worker is alive and will finish it).
    const running = await this.queryAll({ IndexName: GSI2, KeyConditionExpression: 'gsi2pk = :pk', ExpressionAttributeValues: { ':pk': gsi2.status('running') } });
    const requeued: string[] = [];
    for (const ref of running) {
      const id = (ref.pk as string).slice('JOB#'.length);
      const won = await this.updateJob(id, 'SET #status = :queued, gsi2pk = :gsi2pk', '#status = :running', {
        ':queued': 'queued',
        ':running': 'running',
        ':gsi2pk': gsi2.status('queued'),
      });
      if (won) requeued.push(id);
    }
    return requeued;
  }

  async createUser(u: User) {
    return this.putIfAbsent(userItem(u));
  }

  async getUser(username: string) {
    const item = await this.get(keys.user(username));
    return item ? toUser(item) : null;
  }

  async putToken(t: TokenRecord) {
    await this.doc.send(new PutCommand({ TableName: this.table, Item: tokenItem(t) }));
  }

  async getToken(tokenHash: string) {
    const item = await this.get(keys.token(tokenHash));
    return item ? toToken(item) : null;
  }

  async deleteToken(tokenHash: string) {
    await this.doc.send(new DeleteCommand({ TableName: this.table, Key: keys.token(tokenHash) }));
  }

  // Strongly consistent: the core reads its own writes (a job right after claiming it, a script
  // right after creating it).
  private async get(key: Item): Promise<Item | null> {
    const r = await this.doc.send(new GetCommand({ TableName: this.table, Key: key, ConsistentRead: true }));
    return r.Item ?? null;
  }

  private async putIfAbsent(item: Item): Promise<boolean> {
    try {
      await this.doc.send(new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  private updateIfExists(key: Item, update: string, values: Item): Promise<boolean> {
    return this.conditionalUpdate(key, update, 'attribute_exists(pk)', values);
  }

  /** A conditional update of a job; false when the condition (or the job's existence) failed. */
  private updateJob(id: string, update: string, condition: string, values: Item): Promise<boolean> {
    // Every condition is checked against an existing job, never one the update would create.
    return this.conditionalUpdate(keys.job(id), update, `attribute_exists(pk) AND (${condition})`, values, `job ${id}`);
  }

  private async conditionalUpdate(key: Item, update: string, condition: string, values: Item, what = 'item'): Promise<boolean> {
    // `status` is a reserved word, and DynamoDB also rejects a name placeholder left unused.
    const mentionsStatus = update.includes('#status') || condition.includes('#status');
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key,
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: mentionsStatus ? { '#status': 'status' } : undefined,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw translateSizeError(e, what);
    }
  }

  private async queryAll(input: Omit<QueryCommandInput, 'TableName'>): Promise<Item[]> {
    const items: Item[] = [];
    for await (const page of paginateQuery({ client: this.doc }, { TableName: this.table, ...input })) items.push(...(page.Items ?? []));
    return items;
  }
}

export { tableDefinition } from './dynamo-keys.js';
export { ItemTooLargeError } from './dynamo-items.js';
