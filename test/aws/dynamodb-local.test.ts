import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:net';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { dynamoClient, externalEndpoint, startDynamoDb, type DynamoEndpoint } from './dynamodb-local.js';

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(externalEndpoint() !== null)('DynamoDB Local helper', () => {
  let blocker: Server | undefined;
  let dynamo: DynamoEndpoint | undefined;
  afterEach(async () => {
    await dynamo?.stop();
    await new Promise((r) => (blocker ? blocker.close(r) : r(undefined)));
  });

  it('moves to another port when the first one is taken, and stop() kills Java', async () => {
    // Holds the port like a stranger would; hangs up on whoever calls.
    blocker = createServer((socket) => socket.destroy()).listen(0, '127.0.0.1');
    await new Promise((r) => blocker!.once('listening', r));
    const taken = (blocker.address() as { port: number }).port;
    const ports = [taken, 0];
    dynamo = await startDynamoDb(async () => {
      const port = ports.shift()!;
      if (port !== 0) return port;
      // A port the OS hands out now, as the default picker does.
      const probe = createServer().listen(0, '127.0.0.1');
      await new Promise((r) => probe.once('listening', r));
      const free = (probe.address() as { port: number }).port;
      await new Promise((r) => probe.close(r));
      return free;
    });
    expect(dynamo.endpoint).not.toContain(`:${taken}`);

    const client = dynamoClient(dynamo.endpoint);
    await expect(client.send(new ListTablesCommand({}))).resolves.toHaveProperty('TableNames');
    client.destroy();

    const pid = dynamo.pid!;
    expect(isAlive(pid)).toBe(true);
    await dynamo.stop();
    dynamo = undefined;
    expect(isAlive(pid)).toBe(false);
  }, 120_000);
});
