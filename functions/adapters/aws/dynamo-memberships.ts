import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Workspace } from '../../ports.js';
import { GSI1, gsi1, keys, type UserKeyedKind } from './dynamo-keys.js';
import { toWorkspace, type Item } from './dynamo-items.js';
import { batchGet, conditionalUpdate, queryAll } from './dynamo-ops.js';

/**
 * A user's memberships and invitations across workspaces (Store.listMemberWorkspaces,
 * Store.listInvitesOf), from the GSI1 keys every member and invite item carries
 * (`MEMBERS#<username>` / `<ws>`, `INVITES#<username>` / `<ws>`, dynamo-keys.ts): one Query of the
 * user's partition, then reads of what it names, however many workspaces the instance has.
 *
 * An index lags the table by a moment. An entry removed a moment ago may still be listed there, so
 * what it names is read from the table itself (strongly consistent) before it is answered: a
 * removed member is never listed. One added a moment ago may be missing for that moment.
 */
export class DynamoMemberships {
  /** Every member and invite item has its GSI1 keys (checked, or done, once per process). */
  private built: Promise<void> | null = null;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async workspacesOf(username: string): Promise<Workspace[]> {
    // Sorted by workspace id (the index's sort key), which both reads below keep.
    const ids = await this.workspaceIdsOf('member', username);
    const [members, workspaces] = await Promise.all([
      batchGet(this.doc, this.table, ids.map((id) => keys.entity('member', id, username)), ['workspace_id']),
      batchGet(this.doc, this.table, ids.map((id) => keys.workspace(id))),
    ]);
    const confirmed = new Set(members.map((m) => m.workspace_id));
    return workspaces.map(toWorkspace).filter((w) => confirmed.has(w.id));
  }

  /** The workspaces whose `kind` item is keyed by this username, as the index has them (the caller reads the items). */
  async workspaceIdsOf(kind: UserKeyedKind, username: string): Promise<string[]> {
    await this.indexBuilt();
    const entries = await queryAll(this.doc, this.table, { IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': gsi1.byUser(kind, username) } });
    return entries.map((e) => e.gsi1sk as string);
  }

  private indexBuilt(): Promise<void> {
    this.built ??= this.buildIndex().catch((e: unknown) => {
      this.built = null;
      throw e;
    });
    return this.built;
  }

  /**
   * Member and invite items written before they carried their GSI1 keys get them, once per table:
   * the first listing after such an upgrade reads every workspace's members and invitations (a
   * Query each, about what one request read before) and sets the keys on those that lack them; a
   * marker item then says it is done. A lost run leaves its progress, and the next one skips the
   * items already keyed. The update is conditional on the item existing, so a member removed
   * meanwhile stays removed.
   */
  private async buildIndex(): Promise<void> {
    if ((await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.userIndexBuilt(), ConsistentRead: true }))).Item) return;
    const workspaces = await queryAll(this.doc, this.table, { IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': gsi1.workspaces() } });
    const parts = workspaces.flatMap((w) => USER_KEYED_KINDS.map((kind) => ({ kind, workspaceId: w.gsi1sk as string })));
    for (let i = 0; i < parts.length; i += BUILD_PARALLELISM) await Promise.all(parts.slice(i, i + BUILD_PARALLELISM).map((p) => this.keyItemsOf(p.kind, p.workspaceId)));
    await this.doc.send(new PutCommand({ TableName: this.table, Item: { ...keys.userIndexBuilt(), built_at: new Date().toISOString() } }));
  }

  private async keyItemsOf(kind: UserKeyedKind, workspaceId: string): Promise<void> {
    const items = await queryAll(this.doc, this.table, {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.entitiesOf(kind, workspaceId) },
      ProjectionExpression: 'pk, sk, gsi1pk',
      ConsistentRead: true,
    });
    for (const item of items.filter((i: Item) => i.gsi1pk === undefined)) {
      const username = item.sk as string;
      const { gsi1pk, gsi1sk } = gsi1.userEntity(kind, username, workspaceId);
      await conditionalUpdate(this.doc, {
        table: this.table,
        key: { pk: item.pk, sk: item.sk },
        update: 'SET gsi1pk = :gsi1pk, gsi1sk = :gsi1sk',
        condition: 'attribute_exists(pk)',
        values: { ':gsi1pk': gsi1pk, ':gsi1sk': gsi1sk },
        what: `${kind} ${username} of ${workspaceId}`,
      });
    }
  }
}

const USER_KEYED_KINDS: UserKeyedKind[] = ['member', 'invite'];

/** Partitions (a kind in a workspace) keyed at once while the index is built. */
const BUILD_PARALLELISM = 16;
