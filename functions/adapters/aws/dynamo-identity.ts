import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { OutboxEvent, TokenRecord, User } from '../../ports.js';
import type { DynamoOutbox } from './dynamo-outbox.js';
import { GSI1, gsi1, keys } from './dynamo-keys.js';
import { toToken, toUser, tokenItem, userItem, type Item } from './dynamo-items.js';
import { parseStored } from '../../core/documents/parse.js';
import { tokenRecord, userRecord } from '../../core/documents/records.js';
import { batchGet, compare, isConditionFailure, queryAll } from './dynamo-ops.js';

/** Users and API tokens in the AWS shell's table: the identity part of DynamoStore. */
export class DynamoIdentity {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly outbox: DynamoOutbox,
  ) {}

  async createUser(record: User, events: OutboxEvent[] = []) {
    const u = parseStored(userRecord, record, `user ${record.username}`);
    if (events.length > 0) return this.outbox.withEvents({ Put: { TableName: this.table, Item: userItem(u), ConditionExpression: 'attribute_not_exists(pk)' } }, events);
    try {
      await this.doc.send(new PutCommand({ TableName: this.table, Item: userItem(u), ConditionExpression: 'attribute_not_exists(pk)' }));
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  async getUser(username: string) {
    const item = await this.get(keys.user(username));
    return item ? toUser(item) : null;
  }

  async listUsers() {
    // The index gives the usernames in order; the users are then read from the table, so an
    // update is seen at once (a user created a moment ago may still be missing from the index).
    const refs = await queryAll(this.doc, this.table, { IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': gsi1.users() } });
    return (await batchGet(this.doc, this.table, refs)).map(toUser);
  }

  async updateUser(record: User) {
    const u = parseStored(userRecord, record, `user ${record.username}`);
    try {
      await this.doc.send(new PutCommand({ TableName: this.table, Item: userItem(u), ConditionExpression: 'attribute_exists(pk)' }));
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  async putToken(record: TokenRecord) {
    const t = parseStored(tokenRecord, record, `token ${record.prefix}`);
    await this.doc.send(new PutCommand({ TableName: this.table, Item: tokenItem(t) }));
  }

  async getToken(tokenHash: string) {
    const item = await this.get(keys.token(tokenHash));
    return item ? toToken(item) : null;
  }

  async listTokens(owner: string) {
    // Why an index and not a second item per token: see gsi1.tokensOf. The index may lag behind:
    // reading the tokens from the table drops deleted ones, and checking the owner and order again
    // drops a token that was replaced with another owner or creation time.
    const refs = await queryAll(this.doc, this.table, { IndexName: GSI1, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': gsi1.tokensOf(owner) } });
    const tokens = (await batchGet(this.doc, this.table, refs)).map(toToken).filter((t) => t.owner === owner);
    return tokens.sort((a, b) => compare(a.created_at, b.created_at) || compare(a.token_hash, b.token_hash));
  }

  async deleteToken(tokenHash: string, events: OutboxEvent[] = []) {
    if (events.length > 0) {
      // Announced only by the write that deleted it.
      await this.outbox.withEvents({ Delete: { TableName: this.table, Key: keys.token(tokenHash), ConditionExpression: 'attribute_exists(pk)' } }, events);
      return;
    }
    await this.doc.send(new DeleteCommand({ TableName: this.table, Key: keys.token(tokenHash) }));
  }

  async markTokenExpiryNotice(tokenHash: string, at: string, events: OutboxEvent[] = []) {
    if (events.length > 0) {
      return this.outbox.withEvents(
        { Update: { TableName: this.table, Key: keys.token(tokenHash), UpdateExpression: 'SET expiry_notice_at = :at', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':at': at } } },
        events,
      );
    }
    try {
      await this.doc.send(
        new UpdateCommand({ TableName: this.table, Key: keys.token(tokenHash), UpdateExpression: 'SET expiry_notice_at = :at', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':at': at } }),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  // Strongly consistent, as every read of DynamoStore: a token is used right after it is made.
  private async get(key: Item): Promise<Item | null> {
    const r = await this.doc.send(new GetCommand({ TableName: this.table, Key: key, ConsistentRead: true }));
    return r.Item ?? null;
  }
}
