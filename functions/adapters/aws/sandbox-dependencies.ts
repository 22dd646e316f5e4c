import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { lockEcosystem } from '../../core/dependencies/lock-script.js';
import type { Ecosystem, RunRequest } from '../../ports.js';
import { unpackTree } from '../../runtime/dependencies/tree-archive.js';
import { DependencyInstallError, type TreeCache } from '../../runtime/dependencies/tree-cache.js';
import { treeKey } from '../../runtime/dependencies/tree-keys.js';
import type { DependencyTrees } from '../../runtime/index.js';

/** An archive this big is refused before it is unpacked. */
const MAX_ARCHIVE_BYTES = 512 * 1024 * 1024;

/**
 * Puts a job's dependency tree where the runner looks for it: fetched from the presigned URL the
 * worker sent and unpacked once per warm environment into the sandbox's tree cache (read-only,
 * named by the lock's key). null when the tree is there (or the job has none), else why the job
 * cannot run.
 */
export async function fetchDependencyTree(request: RunRequest, cache: TreeCache, signal: AbortSignal): Promise<string | null> {
  const ecosystem = lockEcosystem(request.language);
  const key = request.lock && ecosystem ? treeKey(ecosystem, request.lock) : null;
  if (!ecosystem || !key) return null;
  if (!request.dependencies) return 'this job came without the URL of its dependency tree';
  // The sandbox trusts nothing it is sent: the tree must be the one of the job's own lock.
  if (request.dependencies.key !== key) return "the dependency tree sent is not that of this version's lock";
  const url = request.dependencies.url;
  try {
    await cache.ensure(ecosystem, key, async () => {
      const response = await fetch(url, { signal });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const size = Number(response.headers.get('content-length') ?? 0);
      if (size > MAX_ARCHIVE_BYTES) throw new Error(`the archive is larger than ${MAX_ARCHIVE_BYTES} bytes`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      const dir = await mkdtemp(join(await cache.workDir(), 'fetch-'));
      await unpackTree(bytes, dir);
      return dir;
    }, true);
    return null;
  } catch (error) {
    return `the dependency tree of this version could not be fetched: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** The runner's view of the sandbox's tree cache: trees fetched before the job runs, never installed here. */
export function fetchedTrees(cache: TreeCache): DependencyTrees {
  return {
    tree(ecosystem: Ecosystem, lock: string): Promise<string | null> {
      const key = treeKey(ecosystem, lock);
      if (!key) return Promise.resolve(null);
      const path = cache.path(ecosystem, key);
      if (!existsSync(path)) return Promise.reject(new DependencyInstallError('the dependency tree of this version was not fetched'));
      return Promise.resolve(path);
    },
    hold(ecosystem: Ecosystem, lock: string): () => void {
      const key = treeKey(ecosystem, lock);
      return key ? cache.hold(key) : () => undefined;
    },
  };
}
