import { randomUUID } from 'node:crypto';
import type { BlobStore, ScriptVersion } from '../../ports.js';
import { assertFits, stringList, type Item, type ScriptPayload } from './dynamo-items.js';

/**
 * Large payloads of the DynamoDB store live in the BlobStore (S3 in the stack); the item keeps the
 * object's key in a `<field>_ref` attribute instead of the text. Reads resolve the references
 * before an item becomes a record, so the core never sees them.
 *
 * - Every object is written once under a fresh key (`_store/jobs/<id>/result-<uuid>.json`) before
 *   the item refers to it, and never rewritten: a write that loses its condition (a second
 *   completion, a racing script version) cannot touch the winner's object, and blanks its own.
 *   Workspace ids start with a letter or digit, so `_store/` never meets an upload key.
 * - Small payloads stay inline: per write, the largest parts go to S3 until the rest fits its
 *   budget. The budgets (jobs: args 64 KB, result and logs 128 KB, stream 64 KB; scripts: content,
 *   schema and dependency lock 128 KB) keep every item far below DynamoDB's 400 KB, and keep each update of a job
 *   (a claim, a stream append) cheap, since it is billed by the item's whole size.
 * - Objects are "deleted" by overwriting them with an empty body (the BlobStore port has no
 *   delete); a reference to an empty object reads as the scrubbed value (null, or '').
 * - Without a BlobStore, nothing is offloaded and oversized writes fail with ItemTooLargeError.
 */

export const INLINE_BUDGET = {
  /** A workspace document: a flow run's state grows with its loop's items and step results. */
  entity: 128 * 1024,
  args: 64 * 1024,
  completion: 128 * 1024,
  stream: 64 * 1024,
  script: 128 * 1024,
} as const;

/** DynamoDB counts a few bytes per list element besides its text; stream chunks are often tiny. */
export const LIST_ELEMENT_OVERHEAD = 3;

export function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** One key segment: no '/', no '.' or '..' segments, whatever the id holds. */
function segment(s: string): string {
  return encodeURIComponent(s).replace(/\./g, '%2E');
}

export const blobKeys = {
  job: (id: string, field: 'args' | 'result' | 'logs' | 'stream') =>
    `_store/jobs/${segment(id)}/${field}-${randomUUID()}.${field === 'args' || field === 'result' ? 'json' : 'txt'}`,
  entity: (workspaceId: string, kind: string, key: string) => `_store/entities/${segment(workspaceId)}/${segment(kind)}/${segment(key)}/value-${randomUUID()}.json`,
  script: (workspaceId: string, hash: string, field: 'content' | 'schema' | 'lock') =>
    `_store/scripts/${segment(workspaceId)}/${segment(hash)}/${field}-${randomUUID()}.${field === 'schema' ? 'json' : 'txt'}`,
};

export interface Part {
  name: string;
  /** Null stores nothing (args of a job without args). */
  text: string | null;
  key(): string;
}

export interface Stashed {
  /** The object key of each part that went to the BlobStore, by part name. */
  refs: Map<string, string>;
  /** Every key written, to blank again when the write that refers to them fails. */
  written: string[];
}

const decoder = new TextDecoder();

export class Offload {
  constructor(private readonly blobs: BlobStore | undefined) {}

  get enabled(): boolean {
    return this.blobs !== undefined;
  }

  /**
   * Writes the parts of each group that do not fit the group's inline budget, largest first.
   * Without a BlobStore the whole write must fit the item, as it did before offloading existed.
   */
  async stash(what: string, groups: { budget: number; parts: Part[] }[]): Promise<Stashed> {
    const refs = new Map<string, string>();
    if (!this.blobs) {
      assertFits(what, ...groups.flatMap((g) => g.parts.map((p) => p.text)));
      return { refs, written: [] };
    }
    const chosen: Part[] = [];
    for (const g of groups) {
      const sized = g.parts.filter((p) => p.text).map((p) => ({ p, bytes: utf8Bytes(p.text!) })).sort((a, b) => b.bytes - a.bytes);
      let total = sized.reduce((sum, s) => sum + s.bytes, 0);
      for (const s of sized) {
        if (total <= g.budget) break;
        chosen.push(s.p);
        total -= s.bytes;
      }
    }
    for (const p of chosen) refs.set(p.name, p.key());
    await this.putAll(chosen.map((p) => [refs.get(p.name)!, p.text!]));
    return { refs, written: [...refs.values()] };
  }

  /** Where a new version's content, schema and lock go; `written` as for stash. */
  async stashScript(v: ScriptVersion): Promise<{ payload: ScriptPayload; written: string[] }> {
    const schemaJson = JSON.stringify(v.schema);
    const lock = v.lock ?? null;
    const { refs, written } = await this.stash(`script ${v.path}: content, schema and lock`, [
      {
        budget: INLINE_BUDGET.script,
        parts: [
          { name: 'content', text: v.content, key: () => blobKeys.script(v.workspace_id, v.hash, 'content') },
          { name: 'schema', text: schemaJson, key: () => blobKeys.script(v.workspace_id, v.hash, 'schema') },
          { name: 'lock', text: lock, key: () => blobKeys.script(v.workspace_id, v.hash, 'lock') },
        ],
      },
    ]);
    const payload = {
      ...(refs.has('content') ? { content_ref: refs.get('content')! } : { content: v.content }),
      ...(refs.has('schema') ? { schema_ref: refs.get('schema')! } : { schema_json: schemaJson }),
      ...(refs.has('lock') ? { lock_ref: refs.get('lock')! } : { lock }),
    };
    return { payload, written };
  }

  /** Writes the objects, all or none: when one fails, those written are blanked again. */
  async putAll(objects: [key: string, text: string][]): Promise<void> {
    const blobs = this.require();
    const results = await Promise.allSettled(objects.map(([key, text]) => blobs.put(key, Buffer.from(text, 'utf8'), contentType(key))));
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (!failure) return;
    await this.blank(objects.filter((_, i) => results[i].status === 'fulfilled').map(([key]) => key)).catch(() => {});
    throw failure.reason;
  }

  /** The object's text; '' once it was blanked. A missing object is lost data, not an empty field. */
  async load(key: string): Promise<string> {
    const body = await this.require().get(key);
    if (body === null) throw new Error(`the DynamoDB store's offloaded payload ${key} is missing from the BlobStore`);
    return decoder.decode(body);
  }

  /** Overwrites the objects with empty bodies (a delete on the BlobStore port would be cleaner). */
  async blank(keys: Iterable<string>): Promise<void> {
    const unique = [...new Set(keys)];
    if (unique.length === 0) return;
    const blobs = this.require();
    await Promise.all(unique.map((key) => blobs.put(key, new Uint8Array(), contentType(key))));
  }

  /** An item with its job payload references replaced by the texts they point to. */
  async resolveJob(item: Item): Promise<Item> {
    if (!item.args_ref && !item.result_ref && !item.logs_ref && !item.stream_refs?.length) return item;
    const [args, result, logs, segments] = await Promise.all([
      item.args_ref ? this.load(item.args_ref) : undefined,
      item.result_ref ? this.load(item.result_ref) : undefined,
      item.logs_ref ? this.load(item.logs_ref) : undefined,
      Promise.all(stringList(item, 'stream_refs').map((k) => this.load(k))),
    ]);
    return {
      ...item,
      ...(args !== undefined ? { args_json: args || null } : {}),
      ...(result !== undefined ? { result_json: result || 'null' } : {}),
      ...(logs !== undefined ? { log_chunks: [logs] } : {}),
      // Offloaded segments hold the stream's beginning, in order; the inline chunks follow.
      stream_chunks: [...segments, ...stringList(item, 'stream_chunks')],
    };
  }

  async resolveScript(item: Item): Promise<Item> {
    if (!item.content_ref && !item.schema_ref && !item.lock_ref) return item;
    const [content, schema, lock] = await Promise.all([
      item.content_ref ? this.load(item.content_ref) : undefined,
      item.schema_ref ? this.load(item.schema_ref) : undefined,
      item.lock_ref ? this.load(item.lock_ref) : undefined,
    ]);
    return {
      ...item,
      ...(content !== undefined ? { content } : {}),
      ...(schema !== undefined ? { schema_json: schema || '{}' } : {}),
      // A blanked lock (its path deleted) reads as none.
      ...(lock !== undefined ? { lock: lock || null } : {}),
    };
  }

  private require(): BlobStore {
    if (!this.blobs) throw new Error('this DynamoDB store has offloaded payloads but no BlobStore to read them from');
    return this.blobs;
  }
}

/** Every object a job item refers to. */
export function jobRefs(item: Item): string[] {
  return [item.args_ref, item.result_ref, item.logs_ref, ...stringList(item, 'stream_refs')].filter((k): k is string => typeof k === 'string');
}

export const SCRIPT_REF_ATTRIBUTES = ['content_ref', 'schema_ref', 'lock_ref'];

export function scriptRefs(item: Item): string[] {
  return SCRIPT_REF_ATTRIBUTES.map((a) => item[a]).filter((k): k is string => typeof k === 'string');
}

function contentType(key: string): string {
  return key.endsWith('.json') ? 'application/json' : 'text/plain; charset=utf-8';
}
