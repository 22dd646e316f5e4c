/**
 * A script version's lock records the workspace scripts it imports, each at the exact version
 * (hash) it resolved to when the version was created, in lines before the package lock:
 *
 *     # workspace-import f/common/helper 0123456789abcdef
 *     <the package lock, if the script or its imports need packages>
 *
 * Jobs run those versions; a new version of a helper reaches an importer only through a new
 * version of the importer (docs/workspace-imports.md). The package part is what the installers
 * see: two scripts with the same packages share one installed tree.
 */

/**
 * The longest lock a create (or generate_metadata, or a flow's inline step) takes, in characters:
 * as long as a script's content. A lock is what an earlier version stored, given back (`svc sync
 * pull`, then push), and resolution writes npm's lock of the whole tree, hundreds of KB for a
 * large one: a bound below that refused to take back what the service itself had written.
 */
export const MAX_LOCK_CHARS = 1_000_000;

export interface PinnedImport {
  path: string;
  hash: string;
}

const HEADER_PREFIX = '# workspace-import ';
const HEADER_LINE = /^# workspace-import (\S+) (\S+)$/;

/** The recorded imports and the package lock, or undefined when there is none. */
export function splitLock(lock: string | null | undefined): { imports: PinnedImport[]; packages: string | undefined } {
  if (!lock) return { imports: [], packages: undefined };
  // Every job reads its lock: one without imports (most) is not split at all.
  if (!lock.startsWith(HEADER_PREFIX)) return { imports: [], packages: lock };
  const lines = lock.split('\n');
  const imports: PinnedImport[] = [];
  let i = 0;
  for (; i < lines.length; i++) {
    const m = HEADER_LINE.exec(lines[i].trim());
    if (!m) break;
    imports.push({ path: m[1], hash: m[2] });
  }
  if (imports.length === 0) return { imports, packages: lock };
  const packages = lines.slice(i).join('\n');
  return { imports, packages: packages.trim() ? packages : undefined };
}

/** The lock a version stores: the imports' lines, then the package lock. */
export function joinLock(imports: readonly PinnedImport[], packages: string | undefined): string | undefined {
  if (imports.length === 0) return packages;
  const header = imports.map((i) => `${HEADER_PREFIX}${i.path} ${i.hash}`).join('\n');
  return packages ? `${header}\n${packages}` : `${header}\n`;
}
