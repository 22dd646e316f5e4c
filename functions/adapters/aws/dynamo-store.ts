import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { BlobStore, Delivery, Entity, EntityKind, Job, JobCompletion, JobListFilter, JobQuery, OutboxEvent, ScriptVersion, Store, TokenRecord, User, Workspace } from '../../ports.js';
import { DynamoOutbox, TRANSACTION_MAX_ITEMS } from './dynamo-outbox.js';
import { GSI1, GSI2, GSI4, SCRIPT_HEAD_PREFIX, gsi1, gsi2, keys } from './dynamo-keys.js';
import { readLogChunks } from './dynamo-log-chunks.js';
import {
  scriptHeadUpdate, scriptVersionItem, stringList, toJob, toScript, toToken, toUser, toWorkspace, tokenItem, userItem, workspaceItem, type Item, type ScriptPayload,
} from './dynamo-items.js';
import { DynamoEntities } from './dynamo-entities.js';
import { DynamoIdentity } from './dynamo-identity.js';
import { DynamoMemberships } from './dynamo-memberships.js';
import { parseStored } from '../../core/documents/parse.js';
import { jobStatus, scriptVersionRecord, tokenRecord, userRecord, workspaceRecord } from '../../core/documents/records.js';
import { DynamoJobWrites } from './dynamo-job-writes.js';
import { jobIndexOf, queryJobItems } from './dynamo-job-query.js';
import { countPartitions, mergedQuery, queryPartitions } from './dynamo-sharded-query.js';
import { Offload, SCRIPT_REF_ATTRIBUTES, scriptRefs } from './dynamo-offload.js';
import { RACE, retry } from '../../core/common/retry.js';
import { batchDelete, batchGet, compare, conditionalUpdate, isConditionFailure, queryAll, transactionFailures } from './dynamo-ops.js';

/**
 * The AWS shell's state in one DynamoDB table (layout in dynamo-keys.ts). Every state change the
 * core races on is a conditional write, so SQS redeliveries and concurrent API calls resolve in
 * the database: one claim wins, a finished job stays finished, a script version names its parent.
 * With `blobs`, payloads too large for an item (job args, result, logs and stream; script content
 * and schema) go there and the item refers to them (dynamo-offload.ts); reads resolve the
 * references, so the Store contract does not change.
 */
export class DynamoStore implements Store {
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly offload: Offload;
  private readonly jobs: DynamoJobWrites;
  private readonly entities: DynamoEntities;
  private readonly outbox: DynamoOutbox;
  private readonly identity: DynamoIdentity;
  private readonly memberships: DynamoMemberships;

  /**
   * `runningLeaseMs`: a job stored already `running` (JobQueue.reserve) gets the lease a claim
   * at its `started_at` would have (the worker's: the job timeout plus a margin), so that once
   * its runner is gone it can be claimed again like any lapsed claim (the flow runner's inline
   * steps, inline-flow-steps.ts). Without it such a job is never reclaimed.
   */
  constructor(opts: { client: DynamoDBClient; tableName: string; blobs?: BlobStore; runningLeaseMs?: number }) {
    this.doc = DynamoDBDocumentClient.from(opts.client, { marshallOptions: { removeUndefinedValues: true } });
    this.table = opts.tableName;
    this.offload = new Offload(opts.blobs);
    this.jobs = new DynamoJobWrites(this.doc, this.table, this.offload, opts.runningLeaseMs);
    this.outbox = new DynamoOutbox(this.doc, this.table);
    this.entities = new DynamoEntities(this.doc, this.table, this.outbox, this.offload);
    this.identity = new DynamoIdentity(this.doc, this.table, this.outbox);
    this.memberships = new DynamoMemberships(this.doc, this.table);
  }

  async createWorkspace(record: Workspace) {
    const ws = parseStored(workspaceRecord, record, `workspace ${record.id}`);
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

  listMemberWorkspaces(username: string) {
    return this.memberships.workspacesOf(username);
  }

  async listInvitesOf(username: string) {
    const ids = await this.memberships.workspaceIdsOf('invite', username);
    // Each from the table (strongly consistent): an invitation answered a moment ago is gone there first.
    const invites = await Promise.all(ids.map((id) => this.entities.get('invite', id, username)));
    return invites.filter((e): e is Entity => e !== null);
  }

  async setObjectStorage(id: string, enabled: boolean) {
    await this.updateIfExists(keys.workspace(id), 'SET object_storage_enabled = :on', { ':on': enabled });
  }

  async insertScriptVersion(version: ScriptVersion, expectedLatest: string | null, events: OutboxEvent[] = []) {
    const v = parseStored(scriptVersionRecord, version, `script version ${version.hash}`);
    const { payload, written } = await this.offload.stashScript(v);
    // Objects written for a version that did not get in are nobody's.
    const inserted = await this.insertScriptItems(v, expectedLatest, payload, events).catch(async (e: unknown) => {
      await this.offload.blank(written).catch(() => {});
      throw e;
    });
    if (!inserted) await this.offload.blank(written).catch(() => {});
    return inserted;
  }

  private async insertScriptItems(v: ScriptVersion, expectedLatest: string | null, payload: ScriptPayload, events: OutboxEvent[]) {
    // One transaction: the version exists exactly when the head moved to it, and the head moves
    // only from the hash the caller saw (null: only onto a free path).
    const head = {
      Update: {
        TableName: this.table,
        Key: keys.scriptHead(v.workspace_id, v.path),
        ...scriptHeadUpdate(v, payload),
        ConditionExpression: expectedLatest === null ? 'attribute_not_exists(pk)' : '#hash = :expected',
      },
    };
    if (expectedLatest !== null) head.Update.ExpressionAttributeValues[':expected'] = expectedLatest;
    const version = { Put: { TableName: this.table, Item: scriptVersionItem(v, payload), ConditionExpression: 'attribute_not_exists(pk)' } };
    try {
      await this.doc.send(new TransactWriteCommand({ TransactItems: [version, head, ...this.outbox.puts(events)] }));
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
    return item ? toScript(await this.offload.resolveScript(item)) : null;
  }

  async getScriptByHash(workspaceId: string, hash: string) {
    const item = await this.get(keys.scriptVersion(workspaceId, hash));
    return item ? toScript(await this.offload.resolveScript(item)) : null;
  }

  async listLatestScripts(workspaceId: string) {
    const { pk } = keys.scriptHead(workspaceId, '');
    const heads = await this.queryAll({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': SCRIPT_HEAD_PREFIX },
      ConsistentRead: true,
    });
    return Promise.all(heads.map(async (h) => toScript(await this.offload.resolveScript(h))));
  }

  async deleteScriptPath(workspaceId: string, path: string, events: OutboxEvent[] = []) {
    // Retried when a new version lands between reading the head and deleting it.
    return retry({ attempts: 5, ...RACE, retryOn: (e) => transactionFailures(e) !== null, exhausted: () => new Error('unreachable: errors are rethrown') }, async () => {
      const head = await this.get(keys.scriptHead(workspaceId, path));
      if (!head) return 0;
      const hashes = stringList(head, 'version_hashes');
      // Offloaded contents go with their versions; the head refers to its version's objects.
      const versions = this.offload.enabled
        ? await batchGet(this.doc, this.table, hashes.map((h) => keys.scriptVersion(workspaceId, h)), SCRIPT_REF_ATTRIBUTES)
        : [];
      // Head, events and as many versions as fit go in one transaction (the limit is 100 items),
      // so a usual delete is atomic; a longer history's remaining versions follow in batches.
      const fit = TRANSACTION_MAX_ITEMS - 1 - events.length;
      const atomic = hashes.slice(0, fit);
      // Only this write is retried: its condition fails when the head moved on meanwhile.
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
            ...this.outbox.puts(events),
          ],
        }),
      );
      await batchDelete(this.doc, this.table, hashes.slice(fit).map((h) => keys.scriptVersion(workspaceId, h)));
      await this.offload.blank([head, ...versions].flatMap(scriptRefs));
      return hashes.length;
    });
  }

  async insertJob(job: Job) {
    await this.jobs.insert(job);
  }

  async getJob(workspaceId: string, id: string) {
    const item = await this.get(keys.job(id));
    if (!item || item.workspace_id !== workspaceId) return null;
    return this.withLiveLogs(await this.toJob(item));
  }

  async findJobById(id: string) {
    const item = await this.get(keys.job(id));
    return item ? this.withLiveLogs(await this.toJob(item)) : null;
  }

  private async withLiveLogs(job: Job): Promise<Job> {
    // A running job's live log is in chunk items beside it; a finished job's item has the full text.
    // A flow job has none (only script jobs' runs append logs): no Query for it, read every turn.
    if (job.status === 'running' && job.kind !== 'flow') job.logs += await readLogChunks(this.doc, this.table, job.id);
    return job;
  }

  async getJobStatus(workspaceId: string, id: string) {
    const r = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: keys.job(id), ConsistentRead: true, ProjectionExpression: 'workspace_id, #status', ExpressionAttributeNames: { '#status': 'status' } }),
    );
    if (!r.Item || r.Item.workspace_id !== workspaceId) return null;
    return parseStored(jobStatus, r.Item.status, `job ${id}`);
  }

  async listJobs(f: JobListFilter) {
    const filters: string[] = [];
    const values: Item = {};
    // Running flows have an index of their own (jobIndexOf); elsewhere the status is filtered in GSI1.
    const index = jobIndexOf(f);
    if (f.status && index.statusInIndex) (filters.push('#status = :status'), (values[':status'] = f.status));
    if (f.script_path) (filters.push('script_path = :path'), (values[':path'] = f.script_path));
    // The workspace's job shards, merged newest first (dynamo-sharded-query.ts).
    const pages = mergedQuery(
      this.doc,
      this.table,
      {
        IndexName: index.index,
        sortKey: index.sk,
        KeyConditionExpression: `${index.pk} = :pk`,
        ...(filters.length ? { FilterExpression: filters.join(' AND '), ExpressionAttributeNames: f.status && index.statusInIndex ? { '#status': 'status' } : undefined } : {}),
        ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        ScanIndexForward: false,
        // Limit counts items read before the filter, so read at least a page's worth each time.
        Limit: Math.max(f.limit, 100),
      },
      index.partitions,
      Math.min(Math.max(f.limit, 100), 1000),
    );
    // The index is eventually consistent and does not hold `schedule_path`: read the jobs
    // themselves, page by page, and apply the whole filter to them (before fetching any offloaded payloads).
    const matches = (i: Item) => (!f.status || i.status === f.status) && (!f.kind || i.kind === f.kind) && (!f.script_path || i.script_path === f.script_path) && (!f.schedule_path || i.schedule_path === f.schedule_path);
    const matching: Item[] = [];
    for await (const page of pages) {
      const items = await batchGet(this.doc, this.table, page);
      matching.push(...items.filter(matches));
      if (matching.length >= f.limit) break;
    }
    return Promise.all(matching.slice(0, f.limit).map((i) => this.toJob(i)));
  }

  async queryJobs(q: JobQuery) {
    return queryJobItems(this.doc, this.table, q, (item) => this.toJob(item));
  }

  async listStaleJobs(status: 'queued' | 'running', before: string, limit: number) {
    // The sparse status index is sorted by creation: a job started before `before` was created
    // before it too, so the key condition bounds both; the start time is checked on the items.
    const refs = await queryPartitions(
      this.doc,
      this.table,
      { IndexName: GSI2, KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk < :before', ExpressionAttributeValues: { ':before': before } },
      gsi2.statusPartitions(status),
    );
    // The index may lag: read the jobs themselves and check again.
    const items = await batchGet(this.doc, this.table, refs);
    const since = (i: Item) => String(status === 'queued' ? i.created_at : (i.started_at ?? i.created_at));
    const stale = items.filter((i) => i.status === status && since(i) < before).sort((a, b) => compare(since(a), since(b)));
    return Promise.all(stale.slice(0, limit).map((i) => this.toJob(i)));
  }

  async countQueuedJobs(workspaceId: string, atMost: number) {
    // The workspace's partitions of the sparse queued index (gsi4: its GSI1 shards, whose entries
    // are its queued jobs alone): a keys-only index, ~150 bytes read per queued job. Eventually
    // consistent, like every GSI: a job queued or started a moment ago may be counted or not.
    return countPartitions(this.doc, this.table, { IndexName: GSI4, KeyConditionExpression: 'gsi1pk = :pk' }, gsi1.jobPartitionsOf(workspaceId), atMost);
  }

  async claimJob(id: string, startedAt: string, leaseUntil: string) {
    try {
      const r = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.job(id),
          // gsi3sk: a flow enters the running-flows index (a script job has no gsi3pk: no entry);
          // it leaves the workspace's queued jobs (gsi4sk).
          UpdateExpression: 'SET #status = :running, started_at = :startedAt, lease_until = :leaseUntil, attempts = attempts + :one, gsi2pk = :gsi2pk, gsi3sk = gsi1sk REMOVE gsi4sk',
          // ISO timestamps compare as strings; an item without a lease is never reclaimed.
          // A job held for a concurrency slot is never taken, whatever message names it.
          ConditionExpression: '(#status = :queued AND (attribute_not_exists(held) OR held = :notHeld)) OR (#status = :running AND lease_until < :startedAt)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':running': 'running',
            ':queued': 'queued',
            ':notHeld': false,
            ':startedAt': startedAt,
            ':leaseUntil': leaseUntil,
            ':one': 1,
            ':gsi2pk': gsi2.status('running', id),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return await this.toJob(r.Attributes!);
    } catch (e) {
      if (isConditionFailure(e)) return null;
      throw e;
    }
  }

  async appendJobStream(id: string, chunk: string) {
    await this.jobs.appendStream(id, chunk);
  }

  async appendJobLogs(id: string, chunk: string) {
    await this.jobs.appendLogs(id, chunk);
  }

  async completeJob(id: string, c: JobCompletion, completedAt: string) {
    return this.jobs.complete(id, c, completedAt);
  }

  async scrubJob(id: string) {
    await this.jobs.scrub(id);
  }

  async countRunJobs(id: string, count: number, limit: number) {
    // An atomic add on a small item beside the job's (whose arguments would make each add a large
    // write): the branches of a run counting at once never conflict, and never pass the limit together.
    if (count > limit) return false;
    const key = keys.jobsMade(id);
    const what = `the jobs of run ${id}`;
    if (count <= 0) return (await conditionalUpdate(this.doc, { table: this.table, key, update: 'ADD jobs_made :count', condition: 'attribute_exists(pk)', values: { ':count': count }, what })) !== null;
    const condition = 'attribute_not_exists(jobs_made) OR jobs_made <= :most';
    return (await conditionalUpdate(this.doc, { table: this.table, key, update: 'ADD jobs_made :count', condition, values: { ':count': count, ':most': limit - count }, what })) !== null;
  }

  async releaseHeldJob(id: string) {
    return this.updateJob(id, 'SET held = :no', '#status = :queued AND held = :yes', { ':no': false, ':yes': true, ':queued': 'queued' });
  }

  async requeueInterrupted() {
    // The sparse index holds only unfinished jobs; a job claimed a moment ago may not be in it yet,
    // which a start-up sweep can afford (its worker is alive and will finish it).
    const running = await queryPartitions(this.doc, this.table, { IndexName: GSI2, KeyConditionExpression: 'gsi2pk = :pk' }, gsi2.statusPartitions('running'));
    const requeued: string[] = [];
    for (const ref of running) {
      const id = (ref.pk as string).slice('JOB#'.length);
      // Queued again: back in the workspace's queued jobs (gsi4sk is gsi1sk's `<created_at>#<id>`).
      const won = await this.updateJob(id, 'SET #status = :queued, gsi2pk = :gsi2pk, gsi4sk = gsi1sk REMOVE gsi3sk', '#status = :running', {
        ':queued': 'queued',
        ':running': 'running',
        ':gsi2pk': gsi2.status('queued', id),
      });
      if (won) requeued.push(id);
    }
    return requeued;
  }

  createUser(record: User, events: OutboxEvent[] = []) {
    return this.identity.createUser(record, events);
  }

  getUser(username: string) {
    return this.identity.getUser(username);
  }

  listUsers() {
    return this.identity.listUsers();
  }

  updateUser(record: User) {
    return this.identity.updateUser(record);
  }

  putToken(record: TokenRecord) {
    return this.identity.putToken(record);
  }

  getToken(tokenHash: string) {
    return this.identity.getToken(tokenHash);
  }

  listTokens(owner: string) {
    return this.identity.listTokens(owner);
  }

  deleteToken(tokenHash: string, events: OutboxEvent[] = []) {
    return this.identity.deleteToken(tokenHash, events);
  }

  markTokenExpiryNotice(tokenHash: string, at: string, events: OutboxEvent[] = []) {
    return this.identity.markTokenExpiryNotice(tokenHash, at, events);
  }

  // The jobs go just after the entity, not in its transaction: a job item's write is more than one
  // item here (sharded queue, payload offload), and a flow run naming a job that is missing inserts
  // it at its next turn (Store.replaceEntity).
  async createEntity(e: Entity, events?: OutboxEvent[], jobs: Job[] = []) {
    return this.withJobs(jobs, await this.entities.create(e, events));
  }

  async replaceEntity(e: Entity, expectedVersion: number, events?: OutboxEvent[], jobs: Job[] = []) {
    return this.withJobs(jobs, await this.entities.replace(e, expectedVersion, events));
  }

  private async withJobs(jobs: Job[], changed: boolean): Promise<boolean> {
    if (changed) for (const job of jobs) await this.jobs.insert(job);
    return changed;
  }

  async getEntity(kind: EntityKind, workspaceId: string, key: string) {
    return this.entities.get(kind, workspaceId, key);
  }

  async getEntityStamp(kind: EntityKind, workspaceId: string, key: string) {
    return this.entities.stamp(kind, workspaceId, key);
  }

  async listEntities(kind: EntityKind, workspaceId: string) {
    return this.entities.list(kind, workspaceId);
  }

  async deleteEntity(kind: EntityKind, workspaceId: string, key: string, events?: OutboxEvent[]) {
    return this.entities.delete(kind, workspaceId, key, events);
  }

  async insertDeliveries(events: OutboxEvent[]) {
    await this.outbox.insert(events);
  }

  async listPendingDeliveries(limit: number) {
    return this.outbox.listPending(limit);
  }

  async getDelivery(scope: string, id: string) {
    return this.outbox.get(scope, id);
  }

  async listDeliveries(scope: string, limit: number) {
    return this.outbox.list(scope, limit);
  }

  async replaceDelivery(d: Delivery, expectedVersion: number) {
    return this.outbox.replace(d, expectedVersion);
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

  private async updateIfExists(key: Item, update: string, values: Item): Promise<void> {
    await conditionalUpdate(this.doc, { table: this.table, key, update, condition: 'attribute_exists(pk)', values, what: 'item' });
  }

  /** A conditional update of a job; false when the condition (or the job's existence) failed. */
  private async updateJob(id: string, update: string, condition: string, values: Item): Promise<boolean> {
    // Every condition is checked against an existing job, never one the update would create.
    const key = keys.job(id);
    return (await conditionalUpdate(this.doc, { table: this.table, key, update, condition: `attribute_exists(pk) AND (${condition})`, values, what: `job ${id}` })) !== null;
  }

  private async toJob(item: Item): Promise<Job> {
    return toJob(await this.offload.resolveJob(item));
  }

  private queryAll(input: Omit<QueryCommandInput, 'TableName'>): Promise<Item[]> {
    return queryAll(this.doc, this.table, input);
  }
}

export { tableDefinition } from './dynamo-keys.js';
export { ItemTooLargeError } from './dynamo-items.js';
