import { AsyncLocalStorage } from 'node:async_hooks';
import type { ClientRequest } from 'node:http';
import { onDynamoRequest } from './dynamodb-http-requests.js';

/**
 * Counts the DynamoDB requests made within a call, as they leave for the emulator: the AWS SDK's
 * HTTP handler takes `http.request` when it first sends, so patching it before then sees every
 * DynamoDB call of this process, and an AsyncLocalStorage scope says which call made it. The
 * cost section of docs/aws.md is measured with it (test/aws/flow-runner-dynamodb-cost.test.ts).
 *
 * Counted in items, as DynamoDB bills them: a TransactWriteItems of n items is n writes (each
 * billed twice, `transactWrites`), a BatchGetItem of n keys n reads.
 */
export interface DynamoRequests {
  /** Requests by operation (`PutItem`, `UpdateItem`, `Query`, ...). */
  ops: Record<string, number>;
  /** Items written by PutItem, UpdateItem, DeleteItem, BatchWriteItem and TransactWriteItems. */
  writes: number;
  /** Of `writes`, those inside a transaction (billed at twice the units). */
  transactWrites: number;
  /** Write units of the PutItems: one per started KB of each item (index writes not included). */
  putUnits: number;
  /** GetItem and BatchGetItem items, and Query/Scan requests (one page each). */
  reads: number;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);
const READS = new Set(['GetItem', 'Query', 'Scan']);

const scope = new AsyncLocalStorage<DynamoRequests>();

export const emptyRequests = (): DynamoRequests => ({ ops: {}, writes: 0, transactWrites: 0, putUnits: 0, reads: 0 });

function record(counts: DynamoRequests, target: string, body: string): void {
  const op = target.replace(/^DynamoDB_\d+\./, '');
  counts.ops[op] = (counts.ops[op] ?? 0) + 1;
  if (op === 'PutItem') counts.putUnits += Math.ceil(itemBytes((JSON.parse(body) as { Item: Record<string, AttributeValue> }).Item) / 1024);
  if (WRITES.has(op)) counts.writes += 1;
  else if (READS.has(op)) counts.reads += 1;
  else {
    const parsed = JSON.parse(body || '{}') as { TransactItems?: unknown[]; RequestItems?: Record<string, unknown[] | { Keys: unknown[] }> };
    if (op === 'TransactWriteItems') {
      counts.writes += parsed.TransactItems?.length ?? 0;
      counts.transactWrites += parsed.TransactItems?.length ?? 0;
    } else if (op === 'BatchWriteItem') counts.writes += Object.values(parsed.RequestItems ?? {}).reduce((n, r) => n + (Array.isArray(r) ? r.length : 0), 0);
    else if (op === 'BatchGetItem') counts.reads += Object.values(parsed.RequestItems ?? {}).reduce((n, r) => n + (Array.isArray(r) ? 0 : r.Keys.length), 0);
  }
}

type AttributeValue = { S?: string; N?: string; B?: string; BOOL?: boolean; NULL?: boolean; M?: Record<string, AttributeValue>; L?: AttributeValue[]; SS?: string[] };

/** An item's size as DynamoDB counts it: attribute names plus values (binary as its bytes, not base64). */
export function itemBytes(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce((n, [name, v]) => n + Buffer.byteLength(name) + valueBytes(v), 0);
}

function valueBytes(v: AttributeValue): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) return Math.ceil(v.N.replace(/^-|\.|e.*$/gi, '').length / 2) + 1;
  if (v.B !== undefined) return Buffer.from(v.B, 'base64').length;
  if (v.M) return 3 + itemBytes(v.M);
  if (v.L) return 3 + v.L.reduce((n, x) => n + 1 + valueBytes(x), 0);
  if (v.SS) return v.SS.reduce((n, x) => n + Buffer.byteLength(x), 0);
  return 1;
}

let installed = false;

/** Counts from now on; called before any DynamoDB client of the process has sent (dynamodb-http-requests.ts). */
export function installDynamoRequestCounter(): void {
  if (installed) return;
  installed = true;
  onDynamoRequest((req, target) => {
    const counts = scope.getStore();
    if (!counts || !target.startsWith('DynamoDB_')) return;
    const chunks: Buffer[] = [];
    const write = req.write.bind(req);
    const end = req.end.bind(req);
    req.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (chunk) chunks.push(Buffer.from(chunk as string));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof req.write;
    req.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (chunk && typeof chunk !== 'function') chunks.push(Buffer.from(chunk as string));
      record(counts, target, Buffer.concat(chunks).toString('utf8'));
      return (end as (...a: unknown[]) => ClientRequest)(chunk, ...rest);
    }) as typeof req.end;
  });
}

/** Runs `fn`, counting the DynamoDB requests it makes (and everything it awaits) into `counts`. */
export function countingDynamoRequests<T>(counts: DynamoRequests, fn: () => Promise<T>): Promise<T> {
  return scope.run(counts, fn);
}
