import { createHash } from 'node:crypto';
import type { EffectiveOptions } from './config.js';
import type { Layout } from './layout.js';
import type { Remote } from './remote.js';
import type { Codebase } from './config-schema.js';

/**
 * An item is one thing of the workspace (a script, a flow, a resource, ...) as both sides see it:
 * its `payload` is what the API takes and gives, its `files` what it looks like on disk. Two items
 * are the same when their payloads are (compared as canonical JSON), whatever the file formatting.
 */

export type ItemKind = 'encryption_key' | 'settings' | 'folder' | 'resource_type' | 'group' | 'user' | 'variable' | 'resource' | 'script' | 'flow' | 'app' | 'http_trigger' | 'schedule';

export interface Item {
  kind: ItemKind;
  /** The path or name that identifies it in the workspace. */
  id: string;
  payload: Record<string, unknown>;
  /** Relative path -> content. */
  files: Record<string, string>;
  /**
   * Files the item may leave out, as the payload has them (a script without its `.script.yaml`
   * has the default summary): a push or conflict diff shows these, not a deletion.
   */
  defaults?: Record<string, string>;
  /** A codebase script's source file: its payload holds the bundle, which a pull cannot turn back into source. */
  bundledFrom?: string;
  /**
   * A script's input schema as its `.script.yaml` stores it, sent with a push because svc infers
   * another one (wmill-schema.ts); not part of the payload, so it never shows as a difference.
   */
  storedSchema?: Record<string, unknown>;
}

export interface SyncContext {
  remote: Remote;
  options: EffectiveOptions;
  layout: Layout;
  /** The project directory (where svc.yaml is). */
  root: string;
  codebases: Codebase[];
  /** Deployment message for the versions a push creates. */
  message?: string;
  /** Every local file in the sync scope (set while reading the local side). */
  localFiles?: Set<string>;
  /** Messages for the user that do not stop the sync. */
  warn(message: string): void;
  /** What a file holds that svc cannot represent: left out, and listed by path and reason (docs/windmill.md). */
  skip?(path: string, reason: string): void;
}

/** Remote state a push needs beyond the payload (e.g. a script's current hash for parent_hash). */
export type RemoteMeta = Record<string, unknown>;

export interface KindHandler {
  kind: ItemKind;
  /** Whether svc.yaml asks for this kind to be synced. */
  enabled(options: EffectiveOptions): boolean;
  /** Every item of this kind in the workspace, with what a push needs to know about it. */
  fetchRemote(ctx: SyncContext): Promise<{ item: Item; meta: RemoteMeta }[]>;
  /** The item a local file belongs to, or null when the file is not this kind's. */
  claim(file: string, ctx: SyncContext): string | null;
  /** Reads an item from its local files; throws ItemFileError naming the bad file. */
  parse(id: string, files: Record<string, string>, ctx: SyncContext): Promise<Item>;
  /** Creates or replaces the remote item (`meta` is null when it does not exist remotely). */
  push(item: Item, meta: RemoteMeta | null, ctx: SyncContext): Promise<void>;
  remove(id: string, ctx: SyncContext): Promise<void>;
}

/** A local file that does not describe a valid item. */
export class ItemFileError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'ItemFileError';
  }
}

export const itemKey = (kind: ItemKind, id: string) => `${kind}:${id}`;

/** JSON with object keys sorted at every level: equal payloads give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

export function payloadHash(payload: unknown): string {
  return createHash('sha256').update(canonicalJson(payload)).digest('hex').slice(0, 32);
}
