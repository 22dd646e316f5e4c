import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the last sync saw, per workspace: `.svc-sync/state.json` maps `<server> <workspaceId>` to
 * the hash of each item's payload as of the last pull or push. With it a sync tells which side
 * changed since: an item changed on both sides is a conflict. Machine-local: keep `.svc-sync/` out
 * of git (svc init adds it to .gitignore).
 */

/** Names of this machine's loopback interface: one server, however the URL spells it. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The server part of a state key: `http://localhost:8000/`, `http://127.0.0.1:8000` and
 * `HTTP://LOCALHOST:8000` are one server; the default port is dropped, and the path kept (a server
 * may live under a prefix).
 */
export function serverKey(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return baseUrl.replace(/\/+$/, '');
  }
  const host = LOOPBACK.has(url.hostname) ? 'loopback' : url.hostname;
  const port = url.port ? `:${url.port}` : '';
  return `${url.protocol}//${host}${port}${url.pathname.replace(/\/+$/, '')}`;
}

export const targetKey = (baseUrl: string, workspaceId: string) => `${serverKey(baseUrl)} ${workspaceId}`;

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
    this.adoptOldKeys();
  }

  /** Files written before keys were normalised use the raw URL: they count for the same server. */
  private adoptOldKeys(): void {
    for (const key of Object.keys(this.data.targets)) {
      const at = key.lastIndexOf(' ');
      const normal = targetKey(key.slice(0, at), key.slice(at + 1));
      if (normal === key) continue;
      this.data.targets[normal] = { ...this.data.targets[key], ...this.data.targets[normal] };
      delete this.data.targets[key];
    }
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
