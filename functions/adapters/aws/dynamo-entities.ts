import { gunzipSync, gzipSync } from 'node:zlib';
import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Entity, EntityKind, EntityStamp } from '../../ports.js';
import { parseStored, parseStoredJson } from '../../core/documents/parse.js';
import { entityRecord, entityStamp } from '../../core/documents/records.js';
import { gsi1, isUserKeyed, keys } from './dynamo-keys.js';
import { entity, type Item } from './dynamo-items.js';
import { isConditionFailure, queryAll, translateSizeError } from './dynamo-ops.js';
import type { DynamoOutbox } from './dynamo-outbox.js';
import { blobKeys, INLINE_BUDGET, type Offload } from './dynamo-offload.js';
import type { OutboxEvent } from '../../ports.js';
import { FlowRunModules, MODULES_OF } from './dynamo-flow-run-modules.js';

/**
 * The DynamoStore's workspace documents (members, groups, folders, resources, resource types,
 * variables, flow runs): one item each, under `WS#<ws>#<KIND>` / `<key>` (dynamo-keys.ts). Every
 * write that the core races on is conditional: create on the key being free, replace on the
 * version read. A value past its inline budget (a flow run holding a large loop's items and
 * results) is kept in the BlobStore behind `value_ref`, as job payloads are (dynamo-offload.ts).
 * A flow run's modules are kept once, apart from the run (dynamo-flow-run-modules.ts).
 */
export class DynamoEntities {
  private readonly modules: FlowRunModules;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly outbox: DynamoOutbox,
    private readonly offload: Offload,
  ) {
    this.modules = new FlowRunModules(doc, table);
  }

  async create(e: Entity, events: OutboxEvent[] = []): Promise<boolean> {
    return this.put(await this.entityItem(e), 'attribute_not_exists(pk)', undefined, events);
  }

  /**
   * A conditional Put rather than an Update: the caller hands over the whole entity, and the
   * condition fails alike for a changed version and for a missing item (no version to compare).
   */
  async replace(e: Entity, expectedVersion: number, events: OutboxEvent[] = []): Promise<boolean> {
    return this.put(await this.entityItem(e), '#version = :expected', { ':expected': expectedVersion }, events);
  }

  async get(kind: EntityKind, workspaceId: string, key: string): Promise<Entity | null> {
    if (kind === 'job_limits' && settingsCacheMs > 0) return cachedSetting(`${workspaceId}\n${key}`, () => this.read(kind, workspaceId, key));
    return this.read(kind, workspaceId, key);
  }

  private async read(kind: EntityKind, workspaceId: string, key: string): Promise<Entity | null> {
    // Strongly consistent: a read-modify-replace must start from the latest version.
    const r = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.entity(kind, workspaceId, key), ConsistentRead: true }));
    return r.Item ? this.toEntity(r.Item) : null;
  }

  /** The stored version and times only (a projection: the value, maybe offloaded, is not read). */
  async stamp(kind: EntityKind, workspaceId: string, key: string): Promise<EntityStamp | null> {
    const r = await this.doc.send(
      new GetCommand({
        TableName: this.table,
        Key: keys.entity(kind, workspaceId, key),
        ConsistentRead: true,
        ProjectionExpression: '#version, created_at, updated_at',
        ExpressionAttributeNames: { '#version': 'version' },
      }),
    );
    return r.Item ? parseStored(entityStamp, r.Item, `${kind} ${key}`) : null;
  }

  async list(kind: EntityKind, workspaceId: string): Promise<Entity[]> {
    // The partition holds exactly this kind in this workspace; its sort key order is key order.
    const items = await queryAll(this.doc, this.table, {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.entitiesOf(kind, workspaceId) },
      ConsistentRead: true,
    });
    return Promise.all(items.filter((i) => i[MODULES_OF] === undefined).map((i) => this.toEntity(i)));
  }

  async delete(kind: EntityKind, workspaceId: string, key: string, events: OutboxEvent[] = []): Promise<boolean> {
    const deleted = await this.deleteItem(kind, workspaceId, key, events);
    // A run's modules live in items of their own under its key.
    if (kind === 'flow_run') await this.modules.removeAll(workspaceId, key);
    return deleted;
  }

  private async deleteItem(kind: EntityKind, workspaceId: string, key: string, events: OutboxEvent[]): Promise<boolean> {
    if (events.length > 0) {
      return this.outbox.withEvents({ Delete: { TableName: this.table, Key: keys.entity(kind, workspaceId, key), ConditionExpression: 'attribute_exists(pk)' } }, events);
    }
    // The old image says whether there was an item, without a read before the delete.
    const r = await this.doc.send(new DeleteCommand({ TableName: this.table, Key: keys.entity(kind, workspaceId, key), ReturnValues: 'ALL_OLD' }));
    await this.blankReplaced(r.Attributes, undefined);
    return r.Attributes !== undefined;
  }

  /** `#version` stands for the attribute `version` (DynamoDB rejects a placeholder left unused). */
  private async put({ item, written }: { item: Item; written: string[] }, condition: string, values: Item | undefined, events: OutboxEvent[]): Promise<boolean> {
    // A write that lost its condition (or failed) blanks the object only it referred to.
    const stored = await this.putItem(item, condition, values, events).catch(async (e: unknown) => {
      await this.offload.blank(written).catch(() => {});
      throw e;
    });
    if (!stored) await this.offload.blank(written).catch(() => {});
    return stored;
  }

  private async putItem(item: Item, condition: string, values: Item | undefined, events: OutboxEvent[]): Promise<boolean> {
    const names = condition.includes('#version') ? { '#version': 'version' } : undefined;
    if (events.length > 0) {
      return this.outbox
        .withEvents({ Put: { TableName: this.table, Item: item, ConditionExpression: condition, ExpressionAttributeNames: names, ExpressionAttributeValues: values } }, events)
        .catch((e: unknown) => {
          throw translateSizeError(e, `${item.kind} ${item.key}`);
        });
    }
    try {
      const r = await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: item,
          ConditionExpression: condition,
          ExpressionAttributeNames: condition.includes('#version') ? { '#version': 'version' } : undefined,
          ExpressionAttributeValues: values,
          // The replaced version's offloaded value, if any, is no longer referred to.
          ReturnValues: 'ALL_OLD',
        }),
      );
      await this.blankReplaced(r.Attributes, item);
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw translateSizeError(e, `${item.kind} ${item.key}`);
    }
  }

  /** An offloaded value the item no longer refers to is blanked (best effort: a leftover only costs storage). */
  private async blankReplaced(old: Item | undefined, now: Item | undefined): Promise<void> {
    const ref = old?.value_ref;
    if (typeof ref === 'string' && ref !== now?.value_ref) await this.offload.blank([ref]).catch(() => {});
  }

  private async entityItem(record: Entity): Promise<{ item: Item; written: string[] }> {
    if (record.kind === 'job_limits') settings.delete(`${record.workspace_id}\n${record.key}`);
    const e = parseStored(entityRecord, record, `${record.kind} ${record.key}`);
    const stored = e.kind === 'flow_run' ? await this.modules.stash(e.workspace_id, e.key, e.value) : e.value;
    const valueJson = JSON.stringify(stored);
    const { refs, written } = await this.offload.stash(`${e.kind} ${e.key} in ${e.workspace_id}`, [
      { budget: INLINE_BUDGET.entity, parts: [{ name: 'value', text: valueJson, key: () => blobKeys.entity(e.workspace_id, e.kind, e.key) }] },
    ]);
    const value = refs.has('value') ? { value_ref: refs.get('value')! } : inlineValue(valueJson);
    return { item: { ...entityAttributes(e), ...value }, written };
  }

  private async toEntity(i: Item): Promise<Entity> {
    const e = entityFrom(i, typeof i.value_ref === 'string' ? await this.offload.load(i.value_ref) : i.value_gz instanceof Uint8Array ? gunzipSync(i.value_gz).toString('utf8') : i.value_json);
    return e.kind === 'flow_run' ? { ...e, value: await this.modules.restore(e.workspace_id, e.key, e.value) } : e;
  }
}

/**
 * Workspace job limits, read before every job a process runs, may be served from memory for
 * `settingsCacheMs` (0, off, unless a handler turns it on: the flow runner, whose inline steps
 * would otherwise read them once per step). A change made elsewhere reaches such a process at most
 * that long after; one made through this process at once.
 */
let settingsCacheMs = 0;
const settings = new Map<string, { at: number; value: Promise<Entity | null> }>();

export function cacheJobLimitsFor(ms: number): void {
  settingsCacheMs = ms;
  settings.clear();
}

function cachedSetting(id: string, read: () => Promise<Entity | null>): Promise<Entity | null> {
  const hit = settings.get(id);
  if (hit && Date.now() - hit.at < settingsCacheMs) return hit.value;
  const value = read();
  settings.set(id, { at: Date.now(), value });
  value.catch(() => settings.delete(id));
  return value;
}

/**
 * DynamoDB bills a write per started KB of the item. A flow run's value is rewritten at every turn
 * and holds its results (its modules are kept apart): past one KB it is kept gzipped (`value_gz`,
 * binary), which keeps a 10-step flow's run at about one write unit per turn (docs/aws.md "Costs"). Smaller values stay JSON text, readable in the console.
 */
const COMPRESS_FROM_BYTES = 1024;

function inlineValue(valueJson: string): Item {
  if (Buffer.byteLength(valueJson) < COMPRESS_FROM_BYTES) return { value_json: valueJson };
  const gz = gzipSync(valueJson);
  return gz.length < Buffer.byteLength(valueJson) ? { value_gz: new Uint8Array(gz) } : { value_json: valueJson };
}

/**
 * The value is kept as a JSON string, like job args: JSON text round-trips exactly (key order,
 * numbers DynamoDB's number type would reject or round), whatever the document holds.
 */
function entityAttributes(e: Entity): Item {
  return {
    ...keys.entity(e.kind, e.workspace_id, e.key),
    // A member or an invitation is listed under its user too (dynamo-memberships.ts).
    ...(isUserKeyed(e.kind) ? gsi1.userEntity(e.kind, e.key, e.workspace_id) : {}),
    // Streams consumers (workspace webhooks) see the kind directly.
    ...entity(e.kind),
    kind: e.kind,
    workspace_id: e.workspace_id,
    key: e.key,
    version: e.version,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

function entityFrom(i: Item, valueJson: string): Entity {
  const what = `${i.kind} ${i.key}`;
  return parseStored(
    entityRecord,
    {
      kind: i.kind,
      workspace_id: i.workspace_id,
      key: i.key,
      value: parseStoredJson(valueJson, what, 'value'),
      version: i.version,
      created_at: i.created_at,
      updated_at: i.updated_at,
    },
    what,
  );
}
