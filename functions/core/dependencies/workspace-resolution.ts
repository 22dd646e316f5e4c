import { badRequest } from '../common/errors.js';
import type { JobError, Language, ScriptVersion, Store } from '../../ports.js';
import type { Rights } from '../identity/permissions.js';
import { derivedOnce, scriptByHash } from '../scripts/version-cache.js';
import { splitLock, type PinnedImport } from './lock-header.js';
import { importFamily, jobFiles, workspaceImports, WorkspaceImportError, type JobModules } from './workspace-imports.js';

/** Bounds on what one script pulls in: the files ride along with every job (a sandbox invocation takes 6 MB). */
const MAX_IMPORTED_SCRIPTS = 100;
const MAX_IMPORTED_BYTES = 2_000_000;

/** An imported script at the version a new version of its importer pins. */
export type ResolvedImport = Pick<ScriptVersion, 'path' | 'hash' | 'language' | 'content'>;

/**
 * Resolves, when a version is created, every workspace script it imports, directly or through
 * another import: each at the version the given lock pins (when that version still exists),
 * else at its latest. Checked as the creator: a script they may not read is refused exactly as
 * one that does not exist, naming the import. An import back to the script being created is
 * refused, so no version's imports go round in a circle; a path imported along several ways is
 * taken once.
 */
export async function resolveWorkspaceImports(
  store: Store,
  rights: Rights,
  root: { path: string; language: Language; content: string },
  givenLock: string | undefined,
): Promise<ResolvedImport[]> {
  const pins = new Map(splitLock(givenLock).imports.map((p) => [p.path, p.hash]));
  const resolved = new Map<string, ResolvedImport>();
  const pending: { from: string; language: Language; content: string; via: string[] }[] = [{ from: root.path, language: root.language, content: root.content, via: [] }];
  let bytes = 0;
  for (let next = pending.shift(); next; next = pending.shift()) {
    for (const imp of parsed(next.language, next.from, next.content, next.via)) {
      const chain = [...next.via, imp.path];
      if (imp.path === root.path) throw invalid(`${describe(chain)} imports ${root.path} itself: a script cannot import itself, directly or through another script`);
      if (resolved.has(imp.path)) continue;
      const version = rights.can('scripts', 'read', imp.path) ? await pinnedOrLatest(store, rights.workspaceId, imp.path, pins.get(imp.path)) : null;
      if (!version) throw invalid(`${describe(chain)}: no script ${imp.path} exists that you may read`);
      if (importFamily(version.language) !== importFamily(root.language)) {
        throw invalid(`${describe(chain)}: ${imp.path} is a ${version.language} script, which a ${root.language} script cannot import`);
      }
      bytes += version.content.length;
      if (resolved.size >= MAX_IMPORTED_SCRIPTS || bytes > MAX_IMPORTED_BYTES) {
        throw invalid(`the script imports more than ${MAX_IMPORTED_SCRIPTS} scripts or ${MAX_IMPORTED_BYTES} bytes of them, counting their own imports`);
      }
      resolved.set(imp.path, { path: version.path, hash: version.hash, language: version.language, content: version.content });
      pending.push({ from: version.path, language: version.language, content: version.content, via: chain });
    }
  }
  return [...resolved.values()];
}

function parsed(language: Language, path: string, content: string, via: string[]) {
  try {
    return workspaceImports(language, path, content);
  } catch (error) {
    if (error instanceof WorkspaceImportError) throw invalid(via.length === 0 ? error.message : `${describe(via)}: ${error.message}`);
    throw error;
  }
}

async function pinnedOrLatest(store: Store, workspaceId: string, path: string, hash: string | undefined): Promise<ScriptVersion | null> {
  const pinned = hash ? await store.getScriptByHash(workspaceId, hash) : null;
  if (pinned && pinned.path === path) return pinned;
  return store.getLatestScript(workspaceId, path);
}

function describe(chain: string[]): string {
  return chain.length <= 1 ? `import ${chain[0] ?? ''}` : `import ${chain.join(' -> ')}`;
}

function invalid(message: string) {
  return badRequest('invalid_script', `content: ${message}`, { field: 'content' });
}

/** The files a job of `script` runs: its code and the pinned versions of what it imports, laid out; or why not. */
export type JobCode = { ok: true; content: string; modules?: JobModules; lock?: string } | { ok: false; error: JobError };

/**
 * Reads the versions the lock pins (immutable, so cached like the script itself) and lays the
 * job's files out. A pinned version deleted since fails the job, naming it.
 */
export async function pinnedJobCode(store: Store, script: ScriptVersion): Promise<JobCode> {
  const { imports, packages } = splitLock(script.lock);
  const lock = packages ? { lock: packages } : {};
  if (imports.length === 0) return { ok: true, content: script.content, ...lock };
  const imported = new Map<string, { content: string }>();
  for (const pin of imports) {
    // Read through the version cache each time: a deleted path is forgotten there.
    const version = await pinnedVersion(store, script.workspace_id, pin);
    if (!version) {
      return { ok: false, error: { name: 'WorkspaceImportMissing', message: `${script.path} imports ${pin.path} at version ${pin.hash}, which no longer exists: create a new version of ${script.path} to import its current version` } };
    }
    imported.set(pin.path, version);
  }
  // Immutable versions in, so laid out once per process: a warm run costs no parse.
  const files = await derivedOnce(store, `workspace-imports\n${script.workspace_id}\n${script.hash}`, async () => jobFiles(script.language, script.path, script.content, imported));
  return { ok: true, content: files?.content ?? script.content, modules: files?.modules ?? {}, ...lock };
}

async function pinnedVersion(store: Store, workspaceId: string, pin: PinnedImport): Promise<ScriptVersion | null> {
  const version = await scriptByHash(store, workspaceId, pin.hash);
  return version && version.path === pin.path ? version : null;
}
