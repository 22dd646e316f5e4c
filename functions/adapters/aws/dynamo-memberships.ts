import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Workspace } from '../../ports.js';
import { GSI1, gsi1, keys } from './dynamo-keys.js';
import { toWorkspace, type Item } from './dynamo-items.js';
import { batchGet, conditionalUpdate, queryAll } from './dynamo-ops.js';

/**
 * The workspaces a user belongs to (Store.listMemberWorkspaces), from the GSI1 keys every member
 * item carries (`MEMBERS#<username>` / `<ws>`, dynamo-keys.ts): one Query of the user's partition
 * and two batched reads, however many workspaces the instance has.
 *
 * An index lags the table by a moment. A member removed a moment ago may still be listed there,
 * so each entry is confirmed against the member item itself (a strongly consistent read): a
 * removed member is never answered. A member added a moment ago may be missing for that moment.
 */
export class DynamoMemberships {
  /** The member index is complete (checked, or built, once per process). */
  private built: Promise<void> | null = null;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async workspacesOf(username: string): Promise<Workspace[]> {
    await this.indexBuilt();
    const entries = await queryAll(this.doc, this.table, { IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': gsi1.membershipsOf(username) } });
    // Sorted by workspace id (the index's sort key), which both reads below keep.
    const ids = entries.map((e) => e.gsi1sk as string);
    const [members, workspaces] = await Promise.all([
      batchGet(this.doc, this.table, ids.map((id) => keys.entity('member', id, username)), ['workspace_id']),
      batchGet(this.doc, this.table, ids.map((id) => keys.workspace(id))),
    ]);
    const confirmed = new Set(members.map((m) => m.workspace_id));
    return workspaces.map(toWorkspace).filter((w) => confirmed.has(w.id));
  }

  private indexBuilt(): Promise<void> {
    this.built ??= this.buildIndex().catch((e: unknown) => {
      this.built = null;
      throw e;
    });
    return this.built;
  }

  /**
   * Member items written before members carried their GSI1 keys get them, once per table: the
   * first listing after such an upgrade reads every workspace's members (one Query each, as one
   * request read them before) and sets the keys on those that lack them; a marker item then says
   * it is done. A lost run leaves its progress, and the next one skips the items already keyed.
   * The update is conditional on the item existing, so a member removed meanwhile stays removed.
   */
  private async buildIndex(): Promise<void> {
    if ((await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.memberIndexBuilt(), ConsistentRead: true }))).Item) return;
    const workspaces = await queryAll(this.doc, this.table, { IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': gsi1.workspaces() } });
    const ids = workspaces.map((w) => w.gsi1sk as string);
    for (let i = 0; i < ids.length; i += BUILD_PARALLELISM) await Promise.all(ids.slice(i, i + BUILD_PARALLELISM).map((id) => this.keyMembersOf(id)));
    await this.doc.send(new PutCommand({ TableName: this.table, Item: { ...keys.memberIndexBuilt(), built_at: new Date().toISOString() } }));
  }

  private async keyMembersOf(workspaceId: string): Promise<void> {
    const members = await queryAll(this.doc, this.table, {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.entitiesOf('member', workspaceId) },
      ProjectionExpression: 'pk, sk, gsi1pk',
      ConsistentRead: true,
    });
    for (const m of members.filter((item: Item) => item.gsi1pk === undefined)) {
      const username = m.sk as string;
      await conditionalUpdate(this.doc, {
        table: this.table,
        key: { pk: m.pk, sk: m.sk },
        update: 'SET gsi1pk = :gsi1pk, gsi1sk = :gsi1sk',
        condition: 'attribute_exists(pk)',
        values: { ':gsi1pk': gsi1.membershipsOf(username), ':gsi1sk': workspaceId },
        what: `member ${username} of ${workspaceId}`,
      });
    }
  }
}

/** Workspaces whose members are keyed at once while the index is built. */
const BUILD_PARALLELISM = 16;
