import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the last sync saw, per workspace: `.svc-sync/state.json` maps `<baseUrl> <workspaceId>` to
 * the hash of each item's payload as of the last pull or push. With it a sync tells which side
 * changed since: an item changed on both sides is a conflict. Machine-local: keep `.svc-sync/` out
 * of git (svc init adds it to .gitignore).
 */

export const STATE_DIR = '.svc-sync';

interface StateFile {
  version: 1;
  targets: Record<string, Record<string, string>>;
}

export class SyncState {
  private readonly file: string;
  private data: StateFile;

  constructor(
    root: string,
    private readonly target: string,
  ) {
    this.file = join(root, STATE_DIR, 'state.json');
    this.data = existsSync(this.file) ? (JSON.parse(readFileSync(this.file, 'utf8')) as StateFile) : { version: 1, targets: {} };
  }

  /** key -> payload hash at the last sync. */
  base(): Map<string, string> {
    return new Map(Object.entries(this.data.targets[this.target] ?? {}));
  }

  /** Records the hashes now in sync (undefined: the item is gone on both sides). */
  save(updates: Map<string, string | undefined>): void {
    const current = { ...this.data.targets[this.target] };
    for (const [key, hash] of updates) {
      if (hash === undefined) delete current[key];
      else current[key] = hash;
    }
    this.data.targets[this.target] = Object.fromEntries(Object.entries(current).sort(([a], [b]) => (a < b ? -1 : 1)));
    mkdirSync(join(this.file, '..'), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.data, null, 2) + '\n');
    renameSync(tmp, this.file);
  }
}
