import { PutCommand, QueryCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Delivery, OutboxEvent } from '../../ports.js';
import { parseStored, parseStoredJson } from '../../core/documents/parse.js';
import { deliveryRecord, newDelivery } from '../../core/documents/records.js';
import { GSI2, gsi2, keys } from './dynamo-keys.js';
import { entity, type Item } from './dynamo-items.js';
import { batchGet, isConditionFailure, transactionFailures } from './dynamo-ops.js';

/**
 * The DynamoStore's outbox: one item per webhook event, written in the same TransactWriteItems
 * as the change it announces, so a change and its event commit together. Its INSERT on the
 * table's stream wakes the events function (functions/handlers/events.ts); pending deliveries also
 * carry the sparse gsi2 keys the dispatcher queries, so nothing depends on the stream alone.
 */

/** One write of a transaction, as TransactWriteCommand takes it. */
export type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];

/** TransactWriteItems takes at most 100 items. */
export const TRANSACTION_MAX_ITEMS = 100;

export class DynamoOutbox {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** The Puts that record `events`, for a transaction of the caller's. */
  puts(events: OutboxEvent[]): TransactItem[] {
    return events.map((e) => ({ Put: { TableName: this.table, Item: deliveryItem(newDelivery(e)), ConditionExpression: 'attribute_not_exists(pk)' } }));
  }

  /**
   * `change` and the events in one transaction: false (nothing written) when the change's own
   * condition failed or lost to a concurrent transaction, as its single-item form would report.
   */
  async withEvents(change: TransactItem, events: OutboxEvent[]): Promise<boolean> {
    try {
      await this.doc.send(new TransactWriteCommand({ TransactItems: [change, ...this.puts(events)] }));
      return true;
    } catch (e) {
      const [first] = transactionFailures(e) ?? [];
      if (first === 'ConditionalCheckFailed' || first === 'TransactionConflict') return false;
      throw e;
    }
  }

  async insert(events: OutboxEvent[]): Promise<void> {
    if (events.length > 0) await this.doc.send(new TransactWriteCommand({ TransactItems: this.puts(events) }));
  }

  async listPending(limit: number): Promise<Delivery[]> {
    const page = await this.doc.send(
      new QueryCommand({ TableName: this.table, IndexName: GSI2, KeyConditionExpression: 'gsi2pk = :pk', ExpressionAttributeValues: { ':pk': gsi2.pendingDeliveries() }, Limit: limit }),
    );
    // The index lags the table a little: reading the items back drops what was delivered meanwhile.
    return (await batchGet(this.doc, this.table, page.Items ?? [])).map(toDelivery).filter((d) => d.status === 'pending');
  }

  async get(scope: string, id: string): Promise<Delivery | null> {
    const [item] = await batchGet(this.doc, this.table, [keys.delivery(scope, id)]);
    return item ? toDelivery(item) : null;
  }

  async list(scope: string, limit: number): Promise<Delivery[]> {
    const page = await this.doc.send(
      new QueryCommand({ TableName: this.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.delivery(scope, '').pk }, ScanIndexForward: false, Limit: limit, ConsistentRead: true }),
    );
    return (page.Items ?? []).map(toDelivery);
  }

  async replace(d: Delivery, expectedVersion: number): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({ TableName: this.table, Item: deliveryItem(d), ConditionExpression: '#version = :expected', ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':expected': expectedVersion } }),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }
}

function deliveryItem(record: Delivery): Item {
  const d = parseStored(deliveryRecord, record, `delivery ${record.id}`);
  return {
    ...keys.delivery(d.scope, d.id),
    ...(d.status === 'pending' ? gsi2.delivery(d.id) : {}),
    ...entity('delivery'),
    status: d.status,
    version: d.version,
    record_json: JSON.stringify(d),
  };
}

function toDelivery(i: Item): Delivery {
  return parseStored(deliveryRecord, parseStoredJson(i.record_json, `delivery ${i.sk}`, 'record_json'), `delivery ${i.sk}`);
}
