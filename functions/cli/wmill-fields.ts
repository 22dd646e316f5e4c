import { posix } from 'node:path';
import { readLocal } from './local-files.js';
import { ItemFileError, type SyncContext } from './items.js';
import { takeWindmillOnlyFields, type WindmillFileKind } from '../core/common/windmill-only-fields.js';

export type { WindmillFileKind };

/**
 * Folders written by Windmill's CLI (`wmill sync pull`) push as they are (docs/windmill.md). Their
 * files carry fields svc has no place for (worker tags, debouncing, ...). Those fields are
 * known by name and kind: each one set to something other than its default is reported by path
 * and reason (`svc sync push --dry-run` lists them) and left out; a field nobody knows is still an
 * error naming the file, as svc.yaml's strict schema makes it.
 */

/**
 * Takes the Windmill-only fields out of a parsed file (core/common/windmill-only-fields.ts), a
 * flow's steps included, reporting each one that is set (nothing in `data` that is not Windmill's
 * is touched).
 */
export function takeWindmillFields(kind: WindmillFileKind, file: string, data: Record<string, unknown>, ctx: Pick<SyncContext, 'skip'>): void {
  for (const { field, reason } of takeWindmillOnlyFields(kind, data)) ctx.skip?.(file, `${field}: ${reason}; left out`);
}

const INLINE = '!inline ';

/**
 * A `lock` of a `.script.yaml` as Windmill writes it: `'!inline <file>'` (a file of the folder,
 * named from the folder's root), the lock itself, or (older CLIs) its lines. Null: no lock.
 */
export function windmillLock(lock: unknown, metaFile: string, ctx: Pick<SyncContext, 'root' | 'localFiles'>): string | null {
  if (lock === undefined || lock === null || lock === '') return null;
  if (Array.isArray(lock) && lock.every((l) => typeof l === 'string')) return lock.join('\n');
  if (typeof lock !== 'string') throw new ItemFileError(metaFile, 'lock: expected a string');
  if (!lock.startsWith(INLINE)) return lock;
  const ref = lock.slice(INLINE.length).trim();
  return readInlineRef(ref, metaFile, ctx);
}

/** A referenced file, only if it is one of the folder's own files: never outside it, never `..`. */
export function readInlineRef(ref: string, from: string, ctx: Pick<SyncContext, 'root' | 'localFiles'>): string {
  const normalized = posix.normalize(ref);
  if (posix.isAbsolute(normalized) || normalized.startsWith('../') || normalized === '..' || !ctx.localFiles?.has(normalized)) {
    throw new ItemFileError(from, `lock: ${ref} is not a file of this folder`);
  }
  return readLocal(ctx.root, normalized);
}

/**
 * What of a Windmill app svc does not run: the files of its folder beside app.yaml (inline
 * scripts Windmill's CLI writes out) and its frontend scripts, which run in Windmill's browser
 * runtime. The app itself is pushed with its definition as it is.
 */
export function reportWindmillAppParts(appYaml: string, files: string[], value: unknown, ctx: Pick<SyncContext, 'skip'>): void {
  for (const file of files) if (file !== appYaml) ctx.skip?.(file, 'svc apps keep their definition in app.yaml only; this file is not pushed');
  const seen = new Set<unknown>();
  const walk = (node: unknown, at: string): void => {
    if (node === null || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    const inline = (node as { inlineScript?: { language?: unknown } }).inlineScript;
    if (inline && typeof inline === 'object' && inline.language === 'frontend') {
      ctx.skip?.(appYaml, `${at}.inlineScript: frontend script: svc does not run an app's browser-side scripts`);
    }
    for (const [key, child] of Object.entries(node)) walk(child, at ? `${at}.${key}` : key);
  };
  walk(value, 'value');
}
