import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { parseStoredJson } from '../../core/documents/parse.js';
import { keys } from './dynamo-keys.js';
import { isConditionFailure } from './dynamo-ops.js';
import type { Item } from './dynamo-items.js';

/**
 * The modules (and failure module) of a flow run stored with them, kept apart from the run item
 * that is rewritten at every turn: they never change during a run, so rewriting them with the
 * results at every step cost a write unit a step for nothing. Runs stored now hold no modules
 * (core/flows/flow-run-document.ts names them in the flow version), so this serves the runs stored
 * before that, which still carry theirs. The run item keeps `modules_ref`, a
 * hash of their JSON; the modules are one item under the run's partition, sort key
 * `<run key>#modules#<hash>`, written once (conditional on the key being free) and read through a
 * cache of this warm process: content-addressed, so a cached entry is never stale.
 */

/** Marks a modules item, so listing a workspace's flow runs skips it. */
export const MODULES_OF = 'modules_of';

const SPLIT = ['modules', 'failure_module'] as const;
const CACHE_ENTRIES = 500;

/** Modules by `<ws>\n<key>\n<hash>`, known stored (written or read by this process). */
const known = new Map<string, Record<string, unknown>>();

function remember(id: string, parts: Record<string, unknown>): void {
  known.delete(id);
  known.set(id, parts);
  if (known.size > CACHE_ENTRIES) known.delete(known.keys().next().value!);
}

/** Forgets what this process knows (tests: a reader in another process, with nothing cached). */
export function forgetFlowRunModules(): void {
  known.clear();
}

export class FlowRunModules {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** The run's value without its modules, and `modules_ref` naming them, once they are stored. */
  async stash(workspaceId: string, key: string, v: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (!Array.isArray(v.modules)) return v;
    const parts = Object.fromEntries(SPLIT.filter((k) => v[k] !== undefined).map((k) => [k, v[k]]));
    const json = JSON.stringify(parts);
    const hash = createHash('sha256').update(json).digest('base64url').slice(0, 22);
    const id = `${workspaceId}\n${key}\n${hash}`;
    if (!known.has(id)) {
      try {
        await this.doc.send(
          new PutCommand({
            TableName: this.table,
            Item: { ...this.itemKey(workspaceId, key, hash), [MODULES_OF]: key, parts_gz: new Uint8Array(gzipSync(json)) },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
      } catch (e) {
        // Already stored: the same hash is the same content.
        if (!isConditionFailure(e)) throw e;
      }
      remember(id, parts);
    }
    const rest = Object.fromEntries(Object.entries(v).filter(([k]) => !(SPLIT as readonly string[]).includes(k)));
    return { ...rest, modules_ref: hash };
  }

  /** The run's value with its modules put back (the cache, else one strongly consistent read). */
  async restore(workspaceId: string, key: string, value: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { modules_ref: hash, ...rest } = value;
    if (typeof hash !== 'string') return value;
    const id = `${workspaceId}\n${key}\n${hash}`;
    let parts = known.get(id);
    if (!parts) {
      const r = await this.doc.send(new GetCommand({ TableName: this.table, Key: this.itemKey(workspaceId, key, hash), ConsistentRead: true }));
      const gz = (r.Item as Item | undefined)?.parts_gz;
      if (!(gz instanceof Uint8Array)) throw new Error(`the modules of flow run ${key} are missing`);
      parts = parseStoredJson(gunzipSync(gz).toString('utf8'), `flow run ${key}`, 'modules') as Record<string, unknown>;
      remember(id, parts);
    }
    return { ...rest, ...parts };
  }

  /** Deletes every modules item of the run (a run deleted with its job's payloads keeps none). */
  async removeAll(workspaceId: string, key: string): Promise<void> {
    const k = keys.entity('flow_run', workspaceId, key);
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': k.pk, ':prefix': `${String(k.sk)}#modules#` },
          ProjectionExpression: 'pk, sk',
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) await this.doc.send(new DeleteCommand({ TableName: this.table, Key: { pk: item.pk, sk: item.sk } }));
      start = page.LastEvaluatedKey;
    } while (start);
    for (const id of known.keys()) if (id.startsWith(`${workspaceId}\n${key}\n`)) known.delete(id);
  }

  private itemKey(workspaceId: string, key: string, hash: string): Item {
    const k = keys.entity('flow_run', workspaceId, key);
    return { pk: k.pk, sk: `${String(k.sk)}#modules#${hash}` };
  }
}
