import { existsSync } from 'node:fs';
import { lstat, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

interface Entry {
  kind: string;
  key: string;
  bytes: number;
  lastUsed: number;
}

/**
 * What the installed trees cost on disk and when each was last used, so the cache can stay under
 * its bound (SVC_DEPS_CACHE_MB) by removing the least recently used trees first. A tree held by a
 * running job (a pin, taken before the job looks its tree up) is never chosen. Trees found on disk
 * at start (an earlier run of the service) count with their size and their directory's mtime,
 * which each use moves forward.
 */
export class TreeBudget {
  private readonly entries = new Map<string, Entry>();
  private readonly pins = new Map<string, number>();
  private scanned: Promise<void> | undefined;
  private lastTick = 0;

  constructor(
    private readonly root: string,
    /** The bound in bytes; undefined: unbounded. */
    readonly maxBytes: number | undefined,
  ) {}

  /** Holds the tree of `key` until the returned function is called (once per hold). */
  pin(key: string): () => void {
    this.pins.set(key, (this.pins.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.pins.get(key) ?? 1) - 1;
      if (left > 0) this.pins.set(key, left);
      else this.pins.delete(key);
    };
  }

  used(kind: string, key: string): void {
    const entry = this.entries.get(key);
    if (entry) entry.lastUsed = this.tick();
  }

  /** Now, strictly after every earlier use: two uses in one millisecond keep their order. */
  private tick(): number {
    this.lastTick = Math.max(Date.now(), this.lastTick + 1);
    return this.lastTick;
  }

  /** A tree put in place (its size measured now). */
  async added(kind: string, key: string, path: string): Promise<void> {
    await this.scan();
    this.entries.set(key, { kind, key, bytes: await treeBytes(path), lastUsed: this.tick() });
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  /**
   * The trees to remove, least recently used first, until the rest fit: never a pinned one, nor
   * `keep` (the tree just installed, which a run is about to ask for). The caller checks the pins
   * again as it moves each out of place, without awaiting in between.
   */
  async victims(keep: string): Promise<Entry[]> {
    if (this.maxBytes === undefined) return [];
    await this.scan();
    let total = [...this.entries.values()].reduce((sum, e) => sum + e.bytes, 0);
    const chosen: Entry[] = [];
    for (const entry of [...this.entries.values()].sort((a, b) => a.lastUsed - b.lastUsed)) {
      if (total <= this.maxBytes) break;
      if (entry.key === keep || this.pins.has(entry.key)) continue;
      chosen.push(entry);
      total -= entry.bytes;
    }
    return chosen;
  }

  isPinned(key: string): boolean {
    return this.pins.has(key);
  }

  private scan(): Promise<void> {
    return (this.scanned ??= (async () => {
      for (const kind of ['npm', 'pypi']) {
        const dir = join(this.root, kind);
        if (!existsSync(dir)) continue;
        for (const key of await readdir(dir)) {
          if (this.entries.has(key)) continue;
          const info = await stat(join(dir, key)).catch(() => null);
          if (info?.isDirectory()) this.entries.set(key, { kind, key, bytes: await treeBytes(join(dir, key)), lastUsed: info.mtimeMs });
        }
      }
    })());
  }
}

/** Bytes of the files of a tree (links and directories count nothing). */
async function treeBytes(path: string): Promise<number> {
  const info = await lstat(path).catch(() => null);
  if (!info) return 0;
  if (!info.isDirectory()) return info.isFile() ? info.size : 0;
  let total = 0;
  for (const name of await readdir(path)) total += await treeBytes(join(path, name));
  return total;
}
