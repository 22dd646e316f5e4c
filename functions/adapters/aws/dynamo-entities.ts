import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Entity, EntityKind } from '../../ports.js';
import { parseStored, parseStoredJson } from '../../core/documents/parse.js';
import { entityRecord } from '../../core/documents/records.js';
import { keys } from './dynamo-keys.js';
import { assertFits, entity, type Item } from './dynamo-items.js';
import { isConditionFailure, queryAll, translateSizeError } from './dynamo-ops.js';
import type { DynamoOutbox } from './dynamo-outbox.js';
import type { OutboxEvent } from '../../ports.js';

/**
 * The DynamoStore's workspace documents (members, groups, folders, resources, resource types,
 * variables): one item each, under `WS#<ws>#<KIND>` / `<key>` (dynamo-keys.ts). Every write that
 * the core races on is conditional: create on the key being free, replace on the version read.
 */
export class DynamoEntities {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly outbox: DynamoOutbox,
  ) {}

  async create(e: Entity, events: OutboxEvent[] = []): Promise<boolean> {
    return this.put(entityItem(e), 'attribute_not_exists(pk)', undefined, events);
  }

  /**
   * A conditional Put rather than an Update: the caller hands over the whole entity, and the
   * condition fails alike for a changed version and for a missing item (no version to compare).
   */
  async replace(e: Entity, expectedVersion: number, events: OutboxEvent[] = []): Promise<boolean> {
    return this.put(entityItem(e), '#version = :expected', { ':expected': expectedVersion }, events);
  }

  async get(kind: EntityKind, workspaceId: string, key: string): Promise<Entity | null> {
    // Strongly consistent: a read-modify-replace must start from the latest version.
    const r = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.entity(kind, workspaceId, key), ConsistentRead: true }));
    return r.Item ? toEntity(r.Item) : null;
  }

  async list(kind: EntityKind, workspaceId: string): Promise<Entity[]> {
    // The partition holds exactly this kind in this workspace; its sort key order is key order.
    const items = await queryAll(this.doc, this.table, {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.entitiesOf(kind, workspaceId) },
      ConsistentRead: true,
    });
    return items.map(toEntity);
  }

  async delete(kind: EntityKind, workspaceId: string, key: string, events: OutboxEvent[] = []): Promise<boolean> {
    if (events.length > 0) {
      return this.outbox.withEvents({ Delete: { TableName: this.table, Key: keys.entity(kind, workspaceId, key), ConditionExpression: 'attribute_exists(pk)' } }, events);
    }
    // The old image says whether there was an item, without a read before the delete.
    const r = await this.doc.send(new DeleteCommand({ TableName: this.table, Key: keys.entity(kind, workspaceId, key), ReturnValues: 'ALL_OLD' }));
    return r.Attributes !== undefined;
  }

  /** `#version` stands for the attribute `version` (DynamoDB rejects a placeholder left unused). */
  private async put(item: Item, condition: string, values: Item | undefined, events: OutboxEvent[]): Promise<boolean> {
    const names = condition.includes('#version') ? { '#version': 'version' } : undefined;
    if (events.length > 0) {
      return this.outbox
        .withEvents({ Put: { TableName: this.table, Item: item, ConditionExpression: condition, ExpressionAttributeNames: names, ExpressionAttributeValues: values } }, events)
        .catch((e: unknown) => {
          throw translateSizeError(e, `${item.kind} ${item.key}`);
        });
    }
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: item,
          ConditionExpression: condition,
          ExpressionAttributeNames: condition.includes('#version') ? { '#version': 'version' } : undefined,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw translateSizeError(e, `${item.kind} ${item.key}`);
    }
  }
}

/**
 * The value is kept as a JSON string, like job args: JSON text round-trips exactly (key order,
 * numbers DynamoDB's number type would reject or round), whatever the document holds.
 */
function entityItem(record: Entity): Item {
  const e = parseStored(entityRecord, record, `${record.kind} ${record.key}`);
  const valueJson = JSON.stringify(e.value);
  assertFits(`${e.kind} ${e.key} in ${e.workspace_id}`, valueJson);
  return {
    ...keys.entity(e.kind, e.workspace_id, e.key),
    // Streams consumers (workspace webhooks) see the kind directly.
    ...entity(e.kind),
    kind: e.kind,
    workspace_id: e.workspace_id,
    key: e.key,
    value_json: valueJson,
    version: e.version,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

function toEntity(i: Item): Entity {
  const what = `${i.kind} ${i.key}`;
  return parseStored(
    entityRecord,
    {
      kind: i.kind,
      workspace_id: i.workspace_id,
      key: i.key,
      value: parseStoredJson(i.value_json, what, 'value'),
      version: i.version,
      created_at: i.created_at,
      updated_at: i.updated_at,
    },
    what,
  );
}
