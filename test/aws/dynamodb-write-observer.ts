import http, { type ClientRequest } from 'node:http';

/**
 * Tells listeners when this process has written to DynamoDB: each DynamoDB write request
 * (PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems) whose answer has arrived.
 * The AWS shell's stream pollers poll at Lambda's idle rate and at once after such a write
 * (dynamodb-stream-event-source.ts), so a job the api stores is dispatched as soon as before
 * without both pollers asking the emulator every 50 ms while nothing happens. Like the request
 * counter (dynamodb-request-counter.ts), it patches `http.request` before any client has sent.
 */
const WRITES = /^DynamoDB_\d+\.(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems)$/;

const listeners: Array<() => void> = [];
let installed = false;

export function onDynamoWrite(listener: () => void): () => void {
  installDynamoWriteObserver();
  listeners.push(listener);
  return () => {
    const i = listeners.indexOf(listener);
    if (i >= 0) listeners.splice(i, 1);
  };
}

/** Patches `http.request` once; called before any DynamoDB client of the process has sent. */
export function installDynamoWriteObserver(): void {
  if (installed) return;
  installed = true;
  const original = http.request;
  http.request = function request(this: unknown, ...args: Parameters<typeof http.request>): ClientRequest {
    const req = original.apply(this, args);
    const options = args[0];
    const headers = (typeof options === 'object' && !(options instanceof URL) ? (options as http.RequestOptions).headers : undefined) as Record<string, string> | undefined;
    const target = headers?.['x-amz-target'] ?? headers?.['X-Amz-Target'];
    if (target && WRITES.test(target)) req.once('response', () => listeners.forEach((listener) => listener()));
    return req;
  } as typeof http.request;
}
