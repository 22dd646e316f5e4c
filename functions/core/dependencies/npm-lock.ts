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
  packages: Record<string, { version?: string; resolved?: string; integrity?: string; link?: boolean; inBundle?: boolean }>;
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
  if (!Object.values(doc.packages).every(isObject)) return null;
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
  return npmLockSourceProblem(lock, registry);
}

/** The fields of a lock entry whose specs npm may resolve (and fetch) when the tree lacks what they name. */
const DEPENDENCY_FIELDS = ['dependencies', 'optionalDependencies', 'peerDependencies', 'devDependencies'] as const;
/** An npm package name (`name`, `@scope/name`; legacy names may have capitals). */
const PACKAGE_NAME = /^(?:@[A-Za-z0-9~-][\w.~-]*\/)?[A-Za-z0-9~-][\w.~-]*$/;
/**
 * A spec the registry answers: a range or a tag, or an alias of one (`npm:name@^1`). No URL,
 * path, `file:`, `git+...` or `github:` spec: npm would fetch it from wherever it names.
 */
const REGISTRY_SPEC = /^(?:npm:(?:@[A-Za-z0-9~-][\w.~-]*\/)?[A-Za-z0-9~-][\w.~-]*@)?[0-9A-Za-z.^~<>=*|+ -]{0,1024}$/;
/** What npm writes as a locked package's version: exact semver. */
const EXACT_VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * Why `npm ci` of the lock could fetch from anywhere but the instance's registry, or null. Every
 * package is a tarball of the registry (`resolved` under it: without one, npm fetches whatever
 * its `version` names, a URL or a path) at an exact version with a sha512 integrity, and every
 * dependency spec, the root's included, is one the registry answers (npm resolves a spec the
 * tree does not satisfy, fetching a URL or a git repository it names).
 */
export function npmLockSourceProblem(lock: NpmLock, registry: string): string | null {
  for (const [path, entry] of Object.entries(lock.packages)) {
    const name = path === '' ? 'the script' : path.slice('node_modules/'.length);
    if (path !== '') {
      if (!path.startsWith('node_modules/') || path.split('/').includes('..')) return `the lock has an entry outside node_modules: ${path}`;
      if (entry.link) return `the lock links ${path} to a local folder, which svc does not install`;
      if (typeof entry.version !== 'string' || !EXACT_VERSION.test(entry.version)) return `the lock has no exact version for ${name}`;
      // A bundled dependency comes inside the tarball of the package that bundles it (npm writes
      // no tarball for it): an entry of the lock above it that says it bundles dependencies.
      const bundled = entry.inBundle === true && entry.resolved === undefined && entry.integrity === undefined && insideABundler(lock, path);
      if (!bundled) {
        if (typeof entry.resolved !== 'string') return `the lock names no tarball for ${name}`;
        if (!entry.resolved.startsWith(registry)) return `the lock fetches ${name} from ${entry.resolved}, outside the instance's registry ${registry}`;
        if (typeof entry.integrity !== 'string' || !entry.integrity.startsWith('sha512-')) return `the lock has no sha512 integrity for ${name}`;
      }
    }
    for (const field of DEPENDENCY_FIELDS) {
      const specs = (entry as Record<string, unknown>)[field];
      if (specs === undefined) continue;
      if (!isObject(specs)) return `the lock's ${field} of ${name} are not a list of packages`;
      for (const [dependency, spec] of Object.entries(specs)) {
        if (!PACKAGE_NAME.test(dependency) || typeof spec !== 'string' || !REGISTRY_SPEC.test(spec)) {
          return `the lock's ${name} depends on ${dependency}@${String(spec)}, which is not a version or range of the instance's registry`;
        }
      }
    }
  }
  return null;
}

/** Whether a package entry above `path` (`node_modules/a` above `node_modules/a/node_modules/b`) bundles dependencies. */
function insideABundler(lock: NpmLock, path: string): boolean {
  for (let at = path.lastIndexOf('/node_modules/'); at > 0; at = path.lastIndexOf('/node_modules/', at - 1)) {
    const above = lock.packages[path.slice(0, at)] as Record<string, unknown> | undefined;
    if (above && above.bundleDependencies !== undefined && above.bundleDependencies !== false) return true;
  }
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
