import http, { type ClientRequest, type RequestOptions } from 'node:http';

/**
 * Sees each DynamoDB request of this process as it leaves: the AWS SDK's HTTP handler takes
 * `http.request` when it first sends, so patching it once before then sees every call. The hooks
 * get the request and its operation target (`DynamoDB_20120810.PutItem`, `DynamoDBStreams_...`);
 * the request counter (dynamodb-request-counter.ts) and the write observer
 * (dynamodb-write-observer.ts) are two such hooks.
 */
export type DynamoRequestHook = (req: ClientRequest, target: string) => void;

const hooks: DynamoRequestHook[] = [];
let installed = false;

/** Adds a hook, patching `http.request` on the first call; answers what removes it. */
export function onDynamoRequest(hook: DynamoRequestHook): () => void {
  watchDynamoRequests();
  hooks.push(hook);
  return () => {
    const i = hooks.indexOf(hook);
    if (i >= 0) hooks.splice(i, 1);
  };
}

/** Patches `http.request` once: called where a process starts, before its first DynamoDB client sends. */
export function watchDynamoRequests(): void {
  if (installed) return;
  installed = true;
  const original = http.request;
  http.request = function request(this: unknown, ...args: Parameters<typeof http.request>): ClientRequest {
    const req = original.apply(this, args);
    const options = args[0];
    const headers = (typeof options === 'object' && !(options instanceof URL) ? (options as RequestOptions).headers : undefined) as Record<string, string> | undefined;
    const target = headers?.['x-amz-target'] ?? headers?.['X-Amz-Target'];
    if (target?.startsWith('DynamoDB')) for (const hook of hooks) hook(req, target);
    return req;
  } as typeof http.request;
}
