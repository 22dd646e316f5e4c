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
 * | job            | `JOB#<id>`       | `JOB`                   | `WS#<ws>#JOBS` / `<created_at>#<id>`     | `JOBS#<status>` / `<created_at>#<id>` |
 * | live log chunk | `JOB#<id>`       | `LOG#<ms>#<seq>`        |                                          |                                       |
 * | user           | `USER#<name>`    | `USER`                  | `USERS` / `<name>`                       |                                       |
 * | token          | `TOKEN#<hash>`   | `TOKEN`                 | `TOKENS#<owner>` / `<created_at>#<hash>` |                                       |
 * | entity         | `WS#<ws>#<KIND>` | `<key>`                 |                                          |                                       |
 * | delivery       | `OUTBOX#<scope>` | `<event id>`            |                                          | `OUTBOX#pending` / `<event id>`       |
 *
 * Workspace ids are `[a-z0-9_-]` (core/common/paths.ts), so `WS#<ws>#<KIND>` never meets another
 * workspace's `WS#<id>`. Entity keys are never empty (paths, names, usernames): DynamoDB refuses
 * an empty sort key.
 */

export const PK = 'pk';
export const SK = 'sk';
export const GSI1 = 'gsi1';
export const GSI2 = 'gsi2';

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
  user: (username: string) => ({ [PK]: `USER#${username}`, [SK]: 'USER' }),
  token: (tokenHash: string) => ({ [PK]: `TOKEN#${tokenHash}`, [SK]: 'TOKEN' }),
  // One partition per kind and workspace, sorted by key: listing is one strongly consistent Query
  // in key order, and kinds and workspaces cannot see each other's items.
  entitiesOf: (kind: EntityKind, workspaceId: string) => `WS#${workspaceId}#${kind.toUpperCase()}`,
  entity: (kind: EntityKind, workspaceId: string, key: string) => ({ [PK]: keys.entitiesOf(kind, workspaceId), [SK]: key }),
  // A scope's webhook deliveries (a workspace, or `*instance`), sorted by event id: the log is one Query, newest first.
  delivery: (scope: string, id: string) => ({ [PK]: `OUTBOX#${scope}`, [SK]: id }),
};

export const SCRIPT_HEAD_PREFIX = 'SCRIPT#';

export const gsi1 = {
  // A few items per instance in one partition; an index avoids scanning the table to list them.
  workspaces: () => 'WORKSPACES',
  workspace: (id: string) => ({ gsi1pk: gsi1.workspaces(), gsi1sk: id }),
  jobsOf: (workspaceId: string) => `WS#${workspaceId}#JOBS`,
  // ISO timestamps sort as text, so a descending Query is newest first.
  job: (workspaceId: string, createdAt: string, id: string) => ({ gsi1pk: gsi1.jobsOf(workspaceId), gsi1sk: `${createdAt}#${id}` }),
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
};

export const gsi2 = {
  // Sparse: only unfinished jobs carry gsi2 keys, so the index stays as small as the backlog and a
  // crash sweep (requeueInterrupted) reads only running jobs. One partition per status: fine for
  // a sweep that runs at start-up, to be sharded if running jobs ever need more than ~1000 writes/s.
  status: (status: JobStatus) => `JOBS#${status}`,
  job: (status: JobStatus, createdAt: string, id: string) => ({ gsi2pk: gsi2.status(status), gsi2sk: `${createdAt}#${id}` }),
  // Sparse too: only undelivered events, oldest first, for the dispatcher.
  pendingDeliveries: () => 'OUTBOX#pending',
  delivery: (id: string) => ({ gsi2pk: gsi2.pendingDeliveries(), gsi2sk: id }),
};

/** The CreateTable input: keys, indexes, on-demand billing. */
export function tableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk'].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
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
    ],
    // Change events for workspace webhooks are read from the stream (see docs/architecture.md).
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
  };
}
