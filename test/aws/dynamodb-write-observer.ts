import { onDynamoRequest } from './dynamodb-http-requests.js';

/**
 * Tells listeners when this process has written to DynamoDB: each DynamoDB write request
 * (PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems) whose answer has arrived.
 * The AWS shell's stream pollers poll at Lambda's idle rate and at once after such a write
 * (dynamodb-stream-event-source.ts), so a job the api stores is dispatched as soon as before
 * without both pollers asking the emulator every 50 ms while nothing happens. Installed before
 * any DynamoDB client of the process has sent (dynamodb-http-requests.ts).
 */
const WRITES = /^DynamoDB_\d+\.(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems)$/;

export function onDynamoWrite(listener: () => void): () => void {
  return onDynamoRequest((req, target) => {
    if (WRITES.test(target)) req.once('response', listener);
  });
}
