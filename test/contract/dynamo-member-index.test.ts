import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../functions/adapters/aws/dynamo-keys.js';
import { DynamoStore } from '../../functions/adapters/aws/dynamo-store.js';
import { createTestTable, dynamoClient, type DynamoEndpoint } from '../aws/dynamodb-local.js';
import { testDynamoDb } from '../aws/shared-emulator-endpoints.js';
import { countingDynamoRequests, emptyRequests, installDynamoRequestCounter } from '../aws/dynamodb-request-counter.js';
import { anEntity, aWorkspace, uid } from './store-fixtures.js';

/**
 * The DynamoStore's memberships index (dynamo-memberships.ts): member items carry GSI1 keys under
 * their user, so the workspaces a user belongs to cost the same requests however many workspaces
 * the instance has; member and invite items written before they carried the keys get them on the
 * first listing, once per table.
 */

// Before any DynamoDB client of this file sends (the counter patches http.request).
installDynamoRequestCounter();

let dynamo: DynamoEndpoint | undefined;
let client: DynamoDBClient;
let doc: DynamoDBDocumentClient;
let table: { tableName: string; drop(): Promise<void> };

beforeAll(async () => {
  dynamo = await testDynamoDb();
  client = dynamoClient(dynamo.endpoint);
  doc = DynamoDBDocumentClient.from(client);
  table = await createTestTable(client);
}, 120_000);

afterAll(async () => {
  await table?.drop();
  client?.destroy();
  await dynamo?.stop();
});

/** A store as a new process (a Lambda's cold start) has it: nothing known of the table yet. */
const newProcessStore = () => new DynamoStore({ client, tableName: table.tableName });

const raw = async (key: Record<string, string>) => (await doc.send(new GetCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }))).Item;

describe('DynamoStore memberships index', () => {
  it('keys the members and invitations stored before the index on the first listing, once for the table', async () => {
    const writer = newProcessStore();
    const [a, b, c] = [aWorkspace({ id: uid('old-a') }), aWorkspace({ id: uid('old-b') }), aWorkspace({ id: uid('old-c') })];
    for (const ws of [a, b, c]) await writer.createWorkspace(ws);
    const ada = uid('ada');
    for (const ws of [a, b]) await writer.createEntity(anEntity('member', ws.id, ada));
    await writer.createEntity(anEntity('member', c.id, uid('bob')));
    const invite = anEntity('invite', c.id, ada, { value: { username: ada, role: 'developer', invited_by: 'admin' } });
    await writer.createEntity(invite);
    // As an earlier version wrote them: no GSI1 keys.
    for (const key of [keys.entity('member', a.id, ada), keys.entity('member', b.id, ada), keys.entity('invite', c.id, ada)]) {
      await doc.send(new UpdateCommand({ TableName: table.tableName, Key: key, UpdateExpression: 'REMOVE gsi1pk, gsi1sk' }));
    }
    expect(await raw(keys.userIndexBuilt())).toBeUndefined();

    expect(await newProcessStore().listMemberWorkspaces(ada)).toEqual([a, b]);
    expect((await raw(keys.entity('member', a.id, ada)))?.gsi1pk).toBe(`MEMBERS#${ada}`);
    expect((await raw(keys.entity('invite', c.id, ada)))?.gsi1pk).toBe(`INVITES#${ada}`);
    expect(await newProcessStore().listInvitesOf(ada)).toEqual([invite]);
    expect(await raw(keys.userIndexBuilt())).toBeDefined();
    // Another process finds the index built and reads only the user's entries.
    const next = newProcessStore();
    const counts = emptyRequests();
    expect(await countingDynamoRequests(counts, () => next.listMemberWorkspaces(ada))).toEqual([a, b]);
    expect(counts.ops).toEqual({ GetItem: 1, Query: 1, BatchGetItem: 2 });
  });

  it("costs the same requests with 50 more workspaces the user is not in, and never answers a removed member", async () => {
    const store = newProcessStore();
    const ada = uid('ada');
    const mine = aWorkspace({ id: uid('mine') });
    await store.createWorkspace(mine);
    await store.createEntity(anEntity('member', mine.id, ada));
    await store.listMemberWorkspaces(ada);

    const measure = async () => {
      const counts = emptyRequests();
      expect(await countingDynamoRequests(counts, () => store.listMemberWorkspaces(ada))).toEqual([mine]);
      return counts;
    };
    const before = await measure();
    for (let i = 0; i < 50; i++) {
      const other = aWorkspace({ id: uid(`other-${i}`) });
      await store.createWorkspace(other);
      await store.createEntity(anEntity('member', other.id, uid('someone')));
    }
    expect(await measure()).toEqual(before);
    expect(before.ops).toEqual({ Query: 1, BatchGetItem: 2 });

    // The index lags the table: an entry may outlive its member item for a moment. An index
    // entry with no member item behind it (as one just deleted leaves) answers nothing.
    const gone = aWorkspace({ id: uid('gone') });
    await store.createWorkspace(gone);
    await doc.send(new PutCommand({ TableName: table.tableName, Item: { pk: `LAGGING#${gone.id}`, sk: ada, gsi1pk: `MEMBERS#${ada}`, gsi1sk: gone.id } }));
    expect(await store.listMemberWorkspaces(ada)).toEqual([mine]);
  });
});
