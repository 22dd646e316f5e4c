/**
 * A TypeScript script's lock is npm's own `package-lock.json` (lockfileVersion 2 or 3): the root
 * entry's `dependencies` are what the script asked for, every `node_modules/...` entry an exact
 * version with the tarball it came from and its integrity hash. npm installs it with `npm ci`,
 * which refuses a tarball whose hash differs.
 */
export interface NpmLock {
  /** The requirements the lock was resolved for (root entry's dependencies). */
  dependencies: Record<string, string>;
  /** `node_modules/<path>` entries: exact version, tarball URL, integrity. */
  packages: Record<string, { version?: string; resolved?: string; integrity?: string; link?: boolean }>;
}

/** The lock as npm wrote it, or null when `text` is not an npm lock (a lock of another tool, say). */
export function readNpmLock(text: string): NpmLock | null {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(doc) || (doc.lockfileVersion !== 2 && doc.lockfileVersion !== 3) || !isObject(doc.packages)) return null;
  const root = doc.packages[''];
  const dependencies = isObject(root) && isObject(root.dependencies) ? root.dependencies : {};
  if (!Object.values(dependencies).every((v) => typeof v === 'string')) return null;
  return { dependencies: dependencies as Record<string, string>, packages: doc.packages as NpmLock['packages'] };
}

/**
 * Why the lock cannot be installed as is, or null: every imported package must be a dependency of
 * its root, and every package must come from the instance's registry as a tarball with a sha512
 * integrity (no git, file or link sources, and no other host the installer would be sent to).
 */
export function npmLockProblem(lock: NpmLock, imported: string[], registry: string): string | null {
  const missing = imported.filter((name) => !Object.hasOwn(lock.dependencies, name));
  if (missing.length > 0) return `the lock does not cover ${missing.join(', ')}, which the script imports: resolve the lock again`;
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '') continue;
    if (!path.startsWith('node_modules/') || path.split('/').includes('..')) return `the lock has an entry outside node_modules: ${path}`;
    if (entry.link) return `the lock links ${path} to a local folder, which svc does not install`;
    if (typeof entry.resolved === 'string' && !entry.resolved.startsWith(registry)) {
      return `the lock fetches ${path.slice('node_modules/'.length)} from ${entry.resolved}, outside the instance's registry ${registry}`;
    }
    if (typeof entry.integrity !== 'string' || !entry.integrity.startsWith('sha512-')) return `the lock has no sha512 integrity for ${path.slice('node_modules/'.length)}`;
  }
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
