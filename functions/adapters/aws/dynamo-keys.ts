import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import type { EntityKind, JobStatus } from '../../ports.js';

/**
 * The single table's key schema, written once: the store builds its keys here, the tests create
 * their tables from `tableDefinition`, and the CDK stack mirrors the same definition.
 *
 * | item           | pk               | sk                      | gsi1 pk / sk (listings)                  | gsi2 pk / sk (unfinished jobs)        |
 * |----------------|------------------|-------------------------|------------------------------------------|---------------------------------------|
 * | workspace      | `WS#<id>`        | `WORKSPACE`             | `WORKSPACES` / `<id>`                    |                                       |
 * | script version | `WS#<ws>`        | `SCRIPT_VERSION#<hash>` |                                          |                                       |
 * | script head    | `WS#<ws>`        | `SCRIPT#<path>`         |                                          |                                       |
 * | job            | `JOB#<id>`       | `JOB`                   | `WS#<ws>#JOBS#<w>` / `<created_at>#<id>` | `JOBS#<status>#<s>` / `<created_at>#<id>` |
 *
 * A flow job also carries gsi3 keys (a workspace's running flows): `WS#<ws>#FLOWS#<w>` /
 * `<created_at>#<id>`, the sort key only while it runs, so the index holds only running flows.
 * Every job carries `gsi4sk` (`<created_at>#<id>`) only while it is queued: GSI4 is keyed by its
 * GSI1 partition (`gsi1pk`, the workspace's job shard) and that sort key, so it holds a
 * workspace's queued jobs and nothing else, counted before a new run is admitted.
 * | live log chunk | `JOB#<id>`       | `LOG#<ms>#<seq>`        |                                          |                                       |
 * | jobs of a run  | `JOB#<id>`       | `JOBS_MADE`             |                                          |                                       |
 * | user           | `USER#<name>`    | `USER`                  | `USERS` / `<name>`                       |                                       |
 * | token          | `TOKEN#<hash>`   | `TOKEN`                 | `TOKENS#<owner>` / `<created_at>#<hash>` |                                       |
 * | entity         | `WS#<ws>#<KIND>` | `<key>`                 |                                          |                                       |
 * | member entity  | `WS#<ws>#MEMBER` | `<username>`            | `MEMBERS#<username>` / `<ws>`            |                                       |
 * | invite entity  | `WS#<ws>#INVITE` | `<username>`            | `INVITES#<username>` / `<ws>`            |                                       |
 * | index state    | `INDEX#BY_USER`  | `BUILT`                 |                                          |                                       |
 * | delivery       | `OUTBOX#<scope>` | `<event id>`            |                                          | `OUTBOX#pending` / `<event id>`       |
 *
 * A job's index partitions are sharded (`<w>` of WORKSPACE_JOB_SHARDS, `<s>` of JOB_STATUS_SHARDS,
 * both from a hash of the job id) so that no partition key takes more writes than DynamoDB gives
 * one partition; readers query every shard and merge (dynamo-sharded-query.ts). docs/aws.md has
 * the arithmetic. Items written before the sharding carry the unsharded `WS#<ws>#JOBS` and
 * `JOBS#<status>`, which the readers still query (last in the `...Partitions` lists below), so none becomes invisible.
 *
 * Workspace ids are `[a-z0-9_-]` (core/common/paths.ts), so `WS#<ws>#<KIND>` never meets another
 * workspace's `WS#<id>`. Entity keys are never empty (paths, names, usernames): DynamoDB refuses
 * an empty sort key.
 */

export const PK = 'pk';
export const SK = 'sk';
export const GSI1 = 'gsi1';
export const GSI2 = 'gsi2';
export const GSI3 = 'gsi3';
export const GSI4 = 'gsi4';

/**
 * Epoch seconds after which DynamoDB may delete the item (tokens with an expiry). Deletion is lazy
 * (up to days late), so readers still check `expires_at`; TTL only keeps the table from growing.
 */
export const TTL_ATTRIBUTE = 'ttl';

/**
 * Which shape an item has. Not needed for reads (keys say it) but DynamoDB Streams consumers
 * (workspace webhooks) see bare items and dispatch on it.
 */
export type ItemType = 'workspace' | 'script_version' | 'script_head' | 'job' | 'log_chunk' | 'user' | 'token' | 'delivery' | EntityKind;

export const LOG_CHUNK_PREFIX = 'LOG#';

export const keys = {
  workspace: (id: string) => ({ [PK]: `WS#${id}`, [SK]: 'WORKSPACE' }),
  // Versions live under their workspace, keyed by hash: runs by hash (every worker start) are one
  // strongly consistent GetItem, and a hash names its version forever.
  scriptVersion: (workspaceId: string, hash: string) => ({ [PK]: `WS#${workspaceId}`, [SK]: `SCRIPT_VERSION#${hash}` }),
  // One head per path, also under the workspace, so listing the latest scripts is one Query whose
  // sort key order is path order.
  scriptHead: (workspaceId: string, path: string) => ({ [PK]: `WS#${workspaceId}`, [SK]: `SCRIPT#${path}` }),
  // Jobs are addressed by id alone (claim, complete and append know no workspace); getJob checks
  // the workspace after reading.
  job: (id: string) => ({ [PK]: `JOB#${id}`, [SK]: 'JOB' }),
  // A running job's live log, a chunk per item beside it (dynamo-log-chunks.ts), in sequence order.
  logChunk: (jobId: string, seq: string) => ({ [PK]: `JOB#${jobId}`, [SK]: `${LOG_CHUNK_PREFIX}${seq}` }),
  /** The count of the jobs a top-level run made in all (Store.countRunJobs). */
  jobsMade: (jobId: string) => ({ [PK]: `JOB#${jobId}`, [SK]: 'JOBS_MADE' }),
  user: (username: string) => ({ [PK]: `USER#${username}`, [SK]: 'USER' }),
  token: (tokenHash: string) => ({ [PK]: `TOKEN#${tokenHash}`, [SK]: 'TOKEN' }),
  // One partition per kind and workspace, sorted by key: listing is one strongly consistent Query
  // in key order, and kinds and workspaces cannot see each other's items.
  entitiesOf: (kind: EntityKind, workspaceId: string) => `WS#${workspaceId}#${kind.toUpperCase()}`,
  entity: (kind: EntityKind, workspaceId: string, key: string) => ({ [PK]: keys.entitiesOf(kind, workspaceId), [SK]: key }),
  // Present once every member and invite item written before they carried their GSI1 keys has
  // them (dynamo-memberships.ts): a user's entries in GSI1 are then complete.
  userIndexBuilt: () => ({ [PK]: 'INDEX#BY_USER', [SK]: 'BUILT' }),
  // A scope's webhook deliveries (a workspace, or `*instance`), sorted by event id: the log is one Query, newest first.
  delivery: (scope: string, id: string) => ({ [PK]: `OUTBOX#${scope}`, [SK]: id }),
};

export const SCRIPT_HEAD_PREFIX = 'SCRIPT#';

/** The entity kinds keyed by a username, listed by user in GSI1 (`gsi1.byUser`). */
export type UserKeyedKind = Extract<EntityKind, 'member' | 'invite'>;

export function isUserKeyed(kind: EntityKind): kind is UserKeyedKind {
  return kind === 'member' || kind === 'invite';
}

/**
 * Shards of a workspace's job list (GSI1): 1,000 job starts/s in one workspace write ~3,000 index
 * units/s (insert, claim, completion each rewrite the entry, which projects `status`), 375 a shard.
 * Never lowered or renumbered without readers over the old count: a job keeps its shard forever.
 */
export const WORKSPACE_JOB_SHARDS = 8;

/**
 * Shards of each unfinished status (GSI2): 10,000 job starts/s in an instance write ~20,000 index
 * units/s into each of `queued` and `running` (every job enters and leaves both), 312 a shard.
 */
export const JOB_STATUS_SHARDS = 64;

/** A job's shard among `shards`: FNV-1a of its id, so a job's keys are found from its id alone. */
export function jobShard(id: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

const shardNumbers = (count: number) => Array.from({ length: count }, (_, shard) => shard);

export const gsi1 = {
  // A few items per instance in one partition; an index avoids scanning the table to list them.
  workspaces: () => 'WORKSPACES',
  workspace: (id: string) => ({ gsi1pk: gsi1.workspaces(), gsi1sk: id }),
  // A workspace's jobs, in WORKSPACE_JOB_SHARDS partitions; ISO timestamps sort as text, so a
  // descending Query of each is newest first, and merging them keeps that order.
  jobsOf: (workspaceId: string, id: string) => `WS#${workspaceId}#JOBS#${jobShard(id, WORKSPACE_JOB_SHARDS)}`,
  /** Every partition a workspace's jobs may be in, the unsharded one of older items last. */
  jobPartitionsOf: (workspaceId: string) => [...shardNumbers(WORKSPACE_JOB_SHARDS).map((n) => `WS#${workspaceId}#JOBS#${n}`), `WS#${workspaceId}#JOBS`],
  job: (workspaceId: string, createdAt: string, id: string) => ({ gsi1pk: gsi1.jobsOf(workspaceId, id), gsi1sk: `${createdAt}#${id}` }),
  // Users keep a partition each (getUser is on the request path and stays spread out); the
  // listing, an admin's page, reads the index and then the users themselves.
  users: () => 'USERS',
  user: (username: string) => ({ gsi1pk: gsi1.users(), gsi1sk: username }),
  // A token's owner listing is this index rather than a second item per token written in the same
  // transaction: putToken replaces by hash and deleteToken knows only the hash, so a second item
  // would need a read of the old owner before every write, and TTL expiry deletes the token item
  // alone, which would leave the second one behind. The index follows every write and expiry by
  // itself; its lag is covered by reading the tokens from the table afterwards (see listTokens).
  tokensOf: (owner: string) => `TOKENS#${owner}`,
  token: (owner: string, createdAt: string, tokenHash: string) => ({ gsi1pk: gsi1.tokensOf(owner), gsi1sk: `${createdAt}#${tokenHash}` }),
  // A person's memberships and invitations: each `member` and `invite` entity item carries these
  // keys (written with it, gone with it), so the workspaces a user belongs to, or is invited to,
  // are one Query of their partition, sorted by workspace id, instead of a read in every
  // workspace of the instance.
  byUser: (kind: UserKeyedKind, username: string) => `${kind === 'member' ? 'MEMBERS' : 'INVITES'}#${username}`,
  userEntity: (kind: UserKeyedKind, username: string, workspaceId: string) => ({ gsi1pk: gsi1.byUser(kind, username), gsi1sk: workspaceId }),
};

export const gsi2 = {
  // Sparse: only unfinished jobs carry gsi2 keys, so the index stays as small as the backlog and
  // the reaper and a crash sweep read only queued or running jobs. JOB_STATUS_SHARDS partitions
  // per status; a status change moves the entry within the job's shard number.
  status: (status: JobStatus, id: string) => `JOBS#${status}#${jobShard(id, JOB_STATUS_SHARDS)}`,
  /** Every partition a status's jobs may be in, the unsharded one of older items last. */
  statusPartitions: (status: JobStatus) => [...shardNumbers(JOB_STATUS_SHARDS).map((n) => `JOBS#${status}#${n}`), `JOBS#${status}`],
  job: (status: JobStatus, createdAt: string, id: string) => ({ gsi2pk: gsi2.status(status, id), gsi2sk: `${createdAt}#${id}` }),
  // Sparse too: only undelivered events, oldest first, for the dispatcher.
  pendingDeliveries: () => 'OUTBOX#pending',
  delivery: (id: string) => ({ gsi2pk: gsi2.pendingDeliveries(), gsi2sk: id }),
};

export const gsi3 = {
  // Sparse: a flow job carries its partition from its insert (a constant of the item) and the
  // sort key only while `running` (a flow waiting for an approval, a ConsentGate or a sleep is
  // stored running), so an entry is put when the flow starts and removed when it ends, and the
  // list of a workspace's running flows reads nothing else. Script jobs never carry the
  // partition: the sort key a claim sets on every job indexes nothing for them, and costs no
  // index write. WORKSPACE_JOB_SHARDS partitions, by the same hash as GSI1's.
  runningFlowsOf: (workspaceId: string, id: string) => `WS#${workspaceId}#FLOWS#${jobShard(id, WORKSPACE_JOB_SHARDS)}`,
  /** Every partition a workspace's running flows may be in. */
  runningFlowPartitionsOf: (workspaceId: string) => shardNumbers(WORKSPACE_JOB_SHARDS).map((n) => `WS#${workspaceId}#FLOWS#${n}`),
  sortKey: (createdAt: string, id: string) => `${createdAt}#${id}`,
};

export const gsi4 = {
  // Sparse: the sort key is set while the job is queued (insert, a requeue) and removed when it
  // leaves `queued` (a claim, a completion); the partition is the job's gsi1pk, which it always
  // has. A workspace's queued jobs are then counted in its GSI1 partitions of this index
  // (countQueuedJobs), reading only queued jobs' keys, never its whole history.
  sortKey: (createdAt: string, id: string) => `${createdAt}#${id}`,
};

/** The CreateTable input: keys, indexes, on-demand billing. */
export function tableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk', 'gsi4sk'].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: PK, KeyType: 'HASH' },
      { AttributeName: SK, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: GSI1,
        KeySchema: [
          { AttributeName: 'gsi1pk', KeyType: 'HASH' },
          { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
        ],
        // Enough to filter a job listing in the index; the matching items are then read from the
        // table (consistent, and large logs/results are not copied into the index).
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['status', 'script_path'] },
      },
      {
        IndexName: GSI2,
        KeySchema: [
          { AttributeName: 'gsi2pk', KeyType: 'HASH' },
          { AttributeName: 'gsi2sk', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
      {
        IndexName: GSI3,
        KeySchema: [
          { AttributeName: 'gsi3pk', KeyType: 'HASH' },
          { AttributeName: 'gsi3sk', KeyType: 'RANGE' },
        ],
        // The path, for the console's path filter; the flows are then read from the table.
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['script_path'] },
      },
      {
        IndexName: GSI4,
        KeySchema: [
          { AttributeName: 'gsi1pk', KeyType: 'HASH' },
          { AttributeName: 'gsi4sk', KeyType: 'RANGE' },
        ],
        // Only counted: the keys are all a count reads.
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ],
    // Change events for workspace webhooks are read from the stream (see docs/architecture.md).
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
  };
}
