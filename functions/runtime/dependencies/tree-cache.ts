import { existsSync, renameSync } from 'node:fs';
import { chmod, lchown, lstat, mkdir, readdir, rename, rm, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { TreeBudget } from './tree-budget.js';

/**
 * How many failed installs are remembered (their error answers runs at once); the oldest is
 * forgotten past this, and its next run tries the install again.
 */
export const MAX_REMEMBERED_FAILURES = 1_000;

/** Why a version's packages could not be installed: every run of it fails with this. */
export class DependencyInstallError extends Error {}

/**
 * Installed dependency trees, one directory per lock (named by the lock's hash) under the cache
 * root. A tree is installed into a temporary directory and renamed into place whole, so a reader
 * finds a complete tree or none, and two installs of one lock (in this process or another) leave
 * one. Once in place a tree belongs to the service user and is read-only: jobs import from it and
 * can change nothing in it.
 *
 * With a bound (SVC_DEPS_CACHE_MB), each install that takes the cache over it removes the least
 * recently used trees first, never one a running job holds (`hold`); what a hold kept over the
 * bound goes when the hold is released. A removed tree is moved out
 * of place in one step, so a reader again finds a complete tree or none; a later run installs it
 * again.
 */
export class TreeCache {
  private readonly inFlight = new Map<string, Promise<string>>();
  private readonly failures = new Map<string, Error>();
  private readonly budget: TreeBudget;
  private evictions: Promise<void> = Promise.resolve();

  constructor(
    readonly root: string,
    /** The most the trees may take together, in bytes; undefined: no bound. */
    maxBytes?: number,
  ) {
    this.budget = new TreeBudget(root, maxBytes);
  }

  /**
   * Keeps the tree of `key` from being removed until the returned function is called. Taken
   * before the tree is looked up, and released when the job that runs with it ends.
   */
  hold(key: string): () => void {
    const release = this.budget.pin(key);
    return () => {
      release();
      // An install while this tree was held may have left the cache over its bound: the room
      // it could not free then is freed now.
      if (!this.budget.isPinned(key)) this.evictions = this.evictions.then(() => this.evict('')).catch(() => undefined);
    };
  }

  /** Resolves once the removals started so far (by a released hold) are done. */
  settled(): Promise<void> {
    return this.evictions;
  }

  /** Where the tree of `key` is (or will be). */
  path(kind: string, key: string): string {
    return join(this.root, kind, key);
  }

  /** A fresh directory for an install, traversable by a job uid (the root and `tmp` are 0711). */
  async workDir(): Promise<string> {
    await mkdir(join(this.root, 'tmp'), { recursive: true, mode: 0o711 });
    await chmod(this.root, 0o711);
    await chmod(join(this.root, 'tmp'), 0o711);
    return join(this.root, 'tmp');
  }

  /**
   * The tree of `key`: at once when installed, else after `install` (run once however many ask)
   * fills a directory it returns. `retry` forgets an earlier failure (a new version asked for it);
   * otherwise a failed install answers with its error until the process restarts.
   */
  ensure(kind: string, key: string, install: () => Promise<string>, retry = false): Promise<string> {
    const target = this.path(kind, key);
    if (existsSync(target)) {
      this.markUsed(kind, key, target);
      return Promise.resolve(target);
    }
    const running = this.inFlight.get(key);
    if (running) return running;
    const failed = this.failures.get(key);
    if (failed && !retry) return Promise.reject(failed);
    this.failures.delete(key);
    const turn = (async () => {
      const built = await install();
      await seal(built);
      await mkdir(join(this.root, kind), { recursive: true, mode: 0o711 });
      await chmod(join(this.root, kind), 0o711);
      try {
        await rename(built, target);
      } catch (error) {
        // Another install of the same lock got there first: its tree is as good as ours.
        await removeTree(built);
        if (!existsSync(target)) throw error;
      }
      await this.budget.added(kind, key, target);
      await this.evict(key);
      return target;
    })();
    this.inFlight.set(key, turn);
    turn.then(
      () => this.inFlight.delete(key),
      (error: unknown) => {
        this.inFlight.delete(key);
        this.failures.set(key, error instanceof Error ? error : new Error(String(error)));
        // Map order is insertion order: the first key is the oldest failure.
        while (this.failures.size > MAX_REMEMBERED_FAILURES) this.failures.delete(this.failures.keys().next().value!);
      },
    );
    return turn;
  }

  /** The last use moves forward: in memory, and on disk (the tree's mtime) for the next start. */
  private markUsed(kind: string, key: string, target: string): void {
    this.budget.used(kind, key);
    const now = new Date();
    utimes(target, now, now).catch(() => undefined);
  }

  /** Removes the least recently used trees while the cache is over its bound. */
  private async evict(keep: string): Promise<void> {
    const removed: string[] = [];
    // Chosen and moved out of place with no await between: a job's hold cannot slip in.
    for (const victim of await this.budget.victims(keep)) {
      if (this.budget.isPinned(victim.key) || this.inFlight.has(victim.key)) continue;
      const from = this.path(victim.kind, victim.key);
      const to = join(this.root, 'tmp', `evicted-${victim.key}-${process.pid}-${Date.now()}`);
      try {
        renameSync(from, to);
      } catch {
        continue; // already gone (another process of this cache removed it)
      }
      this.budget.forget(victim.key);
      removed.push(to);
    }
    await Promise.all(removed.map((path) => removeTree(path).catch(() => undefined)));
  }
}

/** The service user's and read-only: directories 0555, files 0444 (0555 when executable); links as they are. */
async function seal(path: string): Promise<void> {
  const info = await lstat(path);
  if (info.isSymbolicLink()) {
    if (process.getuid?.() === 0) await lchown(path, 0, 0);
    return;
  }
  if (info.isDirectory()) for (const entry of await readdir(path)) await seal(join(path, entry));
  if (process.getuid?.() === 0) await lchown(path, 0, 0);
  await chmod(path, info.isDirectory() || info.mode & 0o111 ? 0o555 : 0o444);
}

/** Removes a sealed tree (its read-only directories opened again first, for a service not run as root). */
export async function removeTree(path: string): Promise<void> {
  const open = async (dir: string): Promise<void> => {
    const info = await lstat(dir).catch(() => null);
    if (!info?.isDirectory()) return;
    await chmod(dir, 0o755);
    for (const entry of await readdir(dir)) await open(join(dir, entry));
  };
  await open(path);
  await rm(path, { recursive: true, force: true });
}
