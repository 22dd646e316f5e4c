import { mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SchemaInferenceError } from '../core/schema/index.js';
import { inferScriptSchema } from '../core/dependencies/workspace-imports.js';
import { encryptionKey, folders, groups, resources, resourceTypes, settings, users, variables } from './kinds/documents.js';
import { apps } from './kinds/apps.js';
import { httpTriggers, schedules } from './kinds/triggers.js';
import { flows } from './kinds/flows.js';
import { scripts, scriptsWithoutLock } from './kinds/scripts.js';
import { assertInsideFolder, assertNoLinks } from './remote-names.js';
import { CliError, EXIT } from './errors.js';
import { listLocalFiles, readLocal, scopeFilter, setAsideUnsupported } from './local-files.js';
import { mapPool } from './pool.js';
import { importWaves } from './import-order.js';
import { languageOfFile } from './layout.js';
import { syntaxProblem } from './syntax-check.js';
import { INVALID, planSync, type Change, type Direction, type Plan, type RemoteSide } from './plan.js';
import { itemKey, ItemFileError, payloadHash, type Item, type ItemKind, type KindHandler, type SyncContext } from './items.js';
import type { Language } from '../ports.js';

/** Reading both sides, planning, checking and applying a pull or a push. */

/** Push order: what others refer to first (the key before secrets, folders before their items, types before resources). */
export const HANDLERS: KindHandler[] = [encryptionKey, settings, folders, resourceTypes, groups, users, variables, resources, scripts, flows, apps, httpTriggers, schedules];
/** Claim order: a flow's folder owns every file in it. */
// An app's and a flow's folder own the files in them: claimed before the kinds that read single files.
const CLAIM_ORDER: KindHandler[] = [apps, flows, ...HANDLERS.filter((h) => h !== flows && h !== apps)];
/** Kinds that always exist remotely: deleting their file stops syncing them, it never deletes. */
const NEVER_DELETED: ReadonlySet<ItemKind> = new Set(['settings', 'encryption_key']);

const handlerOf = (kind: ItemKind) => HANDLERS.find((h) => h.kind === kind)!;

export interface Sides {
  local: Map<string, Item | typeof INVALID>;
  remote: Map<string, RemoteSide>;
  /** Local files that do not describe a valid item. */
  fileErrors: ItemFileError[];
  /** Items whose only local file is another workspace's specific file: not ours to push, never ours to delete. */
  foreign: Set<string>;
  warnings: string[];
}

export async function readRemote(ctx: SyncContext): Promise<Map<string, RemoteSide>> {
  const inScope = scopeFilter(ctx.options);
  const remote = new Map<string, RemoteSide>();
  for (const h of HANDLERS.filter((h) => h.enabled(ctx.options))) {
    for (const side of await h.fetchRemote(ctx)) {
      // Before anything is written: a name the server made up may not lead out of the folder.
      assertInsideFolder(ctx.root, `${h.kind} ${side.item.id}`, Object.keys(side.item.files));
      assertOwnFiles(h, side.item.id, Object.keys(side.item.files), ctx);
      if (inScope(Object.keys(side.item.files))) remote.set(itemKey(h.kind, side.item.id), side);
    }
  }
  return remote;
}

/**
 * A name the server made up may not put a file, even inside the folder, where the project keeps
 * something else: a resource type named `.github/workflows/deploy` would be written as a CI
 * workflow (`.github/workflows/deploy.resource-type.yaml`) that the user then commits. Every file
 * of a remote item must be one a push reads back as that very item.
 */
function assertOwnFiles(h: KindHandler, id: string, files: string[], ctx: SyncContext): void {
  const key = itemKey(h.kind, id);
  // A codebase script's files are its own once its metadata file is there, as it will be.
  const claiming: SyncContext = { ...ctx, localFiles: new Set([...(ctx.localFiles ?? []), ...files]) };
  for (const file of files) {
    const owner = CLAIM_ORDER.map((k) => ({ k, id: k.claim(file, claiming) })).find((c) => c.id !== null);
    if (owner && itemKey(owner.k.kind, owner.id!) === key) continue;
    throw new CliError(EXIT.failed, `the server named a file that is not where ${h.kind} ${JSON.stringify(id)} lives: ${JSON.stringify(file)} (${owner ? `it is ${owner.k.kind} ${owner.id}'s` : 'no item lives there'}); nothing was written`);
  }
}

export async function readLocalSide(ctx: SyncContext): Promise<Omit<Sides, 'remote'>> {
  const { rest, warnings, skipped } = setAsideUnsupported(listLocalFiles(ctx.root), ctx.options);
  for (const s of skipped) ctx.skip?.(s.path, s.reason);
  ctx.localFiles = new Set(rest);
  const grouped = new Map<string, { handler: KindHandler; id: string; files: string[] }>();
  const unclaimed: string[] = [];
  for (const file of rest) {
    let claimed = false;
    for (const h of CLAIM_ORDER) {
      const id = h.claim(file, ctx);
      if (id === null) continue;
      claimed = true;
      // A disabled kind still owns its files, so they are never taken for another kind.
      if (h.enabled(ctx.options)) {
        const key = itemKey(h.kind, id);
        const group = grouped.get(key) ?? { handler: h, id, files: [] };
        group.files.push(file);
        grouped.set(key, group);
      }
      break;
    }
    if (!claimed) unclaimed.push(file);
  }
  const inScope = scopeFilter(ctx.options);
  const local = new Map<string, Item | typeof INVALID>();
  const fileErrors: ItemFileError[] = [];
  for (const [key, g] of grouped) {
    if (!inScope(g.files)) continue;
    const files = Object.fromEntries(g.files.map((f) => [f, readLocal(ctx.root, f)]));
    try {
      const item = await g.handler.parse(g.id, files, ctx);
      // skipSecrets (the default) keeps secret variables out of the sync both ways.
      if (item.kind === 'variable' && item.payload.is_secret && ctx.options.skipSecrets) continue;
      local.set(key, item);
    } catch (e) {
      if (!(e instanceof ItemFileError)) throw e;
      fileErrors.push(e);
      local.set(key, INVALID);
    }
  }
  const foreign = new Set([...unclaimed.map((f) => foreignKey(f, ctx))].filter((k): k is string => k !== null && !local.has(k)));
  return { local, fileErrors, warnings, foreign };
}

/**
 * The item another workspace's specific file stands for (`f/x/db.prod.resource.yaml` on the dev
 * branch -> `resource:f/x/db`): read as that item's common file would be.
 */
function foreignKey(file: string, ctx: SyncContext): string | null {
  const others = ctx.layout.workspaceNames.filter((w) => w !== ctx.layout.workspaceName);
  const slash = file.lastIndexOf('/');
  for (const ws of others) {
    const at = file.indexOf(`.${ws}.`, slash + 1);
    if (at < 0) continue;
    const common = file.slice(0, at) + file.slice(at + ws.length + 1);
    const plain: SyncContext = { ...ctx, layout: { ...ctx.layout, workspaceName: null, specific: {} } };
    for (const h of CLAIM_ORDER) {
      const id = h.claim(common, plain);
      if (id !== null) return itemKey(h.kind, id);
    }
  }
  return null;
}

export function plan(direction: Direction, sides: Sides, base: Map<string, string>, force: boolean): Plan {
  const p = planSync(direction, sides.local, sides.remote, base, { force });
  if (direction === 'push') p.changes = p.changes.filter((c) => !(c.op === '-' && (NEVER_DELETED.has(c.kind) || sides.foreign.has(c.key))));
  return p;
}

/**
 * `lint`: what the server would refuse, found before anything is pushed — a file that does not
 * describe an item, a script or inline flow script that does not parse in its language
 * (`file:line:column: message`), or a script whose `main` signature cannot be read.
 */
export function lintProblems(sides: Sides, ctx: Pick<SyncContext, 'layout'>): string[] {
  const problems = sides.fileErrors.map((e) => e.message);
  for (const item of sides.local.values()) {
    if (item === INVALID || (item.kind !== 'script' && item.kind !== 'flow')) continue;
    for (const [file, content] of Object.entries(item.files)) {
      const found = file.endsWith('.yaml') || file.endsWith('.lock') ? null : languageOfFile(file, ctx.layout.defaultTs);
      if (!found) continue;
      const problem = syntaxProblem(found.language, file, content);
      if (problem) problems.push(`${file}:${problem.line}:${problem.column}: ${problem.message}`);
    }
    if (item.kind !== 'script') continue;
    // A codebase script's signature is read where its types are: the source, not the bundle.
    const source = item.bundledFrom ? item.files[item.bundledFrom] : (item.payload.content as string);
    try {
      // A script without main is shared code other scripts import: the server keeps it too.
      inferScriptSchema(item.payload.language as Language, source);
    } catch (e) {
      if (!(e instanceof SchemaInferenceError)) throw e;
      problems.push(`${item.bundledFrom ?? item.id}: ${e.message}`);
    }
  }
  return problems;
}

/** `locksRequired`: every local script in scope (but Bash ones) needs its `.script.lock`. */
export function missingLocks(sides: Sides): string[] {
  return scriptsWithoutLock([...sides.local.values()].filter((i): i is Item => i !== INVALID));
}

export interface ApplyResult {
  applied: Change[];
  failed: { change: Change; error: string }[];
  /** New base hashes (undefined: gone on both sides). */
  state: Map<string, string | undefined>;
}

export type Progress = (done: number, total: number, change: Change) => void;

/**
 * Pushes the changes: creates and updates kind by kind in HANDLERS order, then deletions in the
 * reverse order, each kind's operations `parallel` at a time. A failed operation does not stop the
 * others; it is reported.
 */
export async function applyPush(changes: Change[], ctx: SyncContext, progress: Progress, handlers: KindHandler[] = HANDLERS): Promise<ApplyResult> {
  const result: ApplyResult = { applied: [], failed: [], state: new Map() };
  const kinds = handlers.map((h) => h.kind);
  const waves = [
    // Scripts a script of the push imports go first: the server resolves imports at create.
    ...kinds.flatMap((k) => (k === 'script' ? importWaves(changes.filter((c) => c.kind === k && c.op !== '-')) : [changes.filter((c) => c.kind === k && c.op !== '-')])),
    ...[...kinds].reverse().map((k) => changes.filter((c) => c.kind === k && c.op === '-')),
  ].filter((w) => w.length > 0);
  let done = 0;
  for (const wave of waves) {
    await mapPool(wave, ctx.options.parallel ?? 1, async (change) => {
      const h = handlers.find((x) => x.kind === change.kind)!;
      try {
        if (change.op === '-') await h.remove(change.id, ctx);
        else await h.push(change.local!, change.remote?.meta ?? null, ctx);
        result.applied.push(change);
        result.state.set(change.key, change.op === '-' ? undefined : payloadHash(change.local!.payload));
      } catch (e) {
        if (!(e instanceof Error) || (e as { exitCode?: number }).exitCode === 6) throw e;
        result.failed.push({ change, error: e.message });
      }
      progress(++done, changes.length, change);
    });
  }
  return result;
}

/** Writes the remote side into the project: new and changed items' files, deleted items' files removed. */
export function applyPull(changes: Change[], ctx: SyncContext, progress: Progress): ApplyResult {
  const result: ApplyResult = { applied: [], failed: [], state: new Map() };
  // Before anything is written: no file of the pull goes through a symbolic link in the folder.
  for (const change of changes) if (change.op !== '-') assertNoLinks(ctx.root, `${change.kind} ${change.id}`, Object.keys(change.remote!.item.files));
  changes.forEach((change, i) => {
    if (change.local?.bundledFrom) {
      result.failed.push({ change, error: `${change.local.bundledFrom} is a codebase script: its remote version is a bundle, which a pull does not write over the sources` });
      return;
    }
    const oldFiles = Object.keys(change.local?.files ?? {});
    const newFiles = change.op === '-' ? {} : change.remote!.item.files;
    for (const f of oldFiles.filter((f) => !(f in newFiles))) removeFile(ctx.root, f);
    for (const [f, content] of Object.entries(newFiles)) {
      mkdirSync(dirname(join(ctx.root, f)), { recursive: true });
      writeFileSync(join(ctx.root, f), content);
    }
    result.applied.push(change);
    result.state.set(change.key, change.op === '-' ? undefined : payloadHash(change.remote!.item.payload));
    progress(i + 1, changes.length, change);
  });
  return result;
}

/** Removes the file and the directories it leaves empty (a deleted flow's folder). */
function removeFile(root: string, file: string): void {
  rmSync(join(root, file), { force: true });
  let dir = dirname(file);
  while (dir !== '.' && dir !== '') {
    const full = join(root, dir);
    try {
      if (readdirSync(full).length > 0) break;
      rmdirSync(full);
    } catch {
      break;
    }
    dir = dirname(dir);
  }
}

export { handlerOf };
