import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The folder a local service keeps its warm processes' and jobs' files in (those outside a job
 * slot, job-slots.ts), under the system's temporary folder. A service that stops removes its own;
 * one that was killed (kill -9, a power cut) cannot: each service therefore removes, as it starts,
 * the folders of services that have ended (or exited and wait to be collected), known by the pid in
 * their name as slot sets are.
 */
const PREFIX = 'svc-run';

export function createRunFolder(): string {
  removeEndedServiceFolders(tmpdir(), PREFIX);
  const dir = mkdtempSync(join(tmpdir(), `${PREFIX}-${process.pid}-`));
  // Jobs run as other users and must reach their own folders inside; they may not list it.
  chmodSync(dir, 0o711);
  return dir;
}

/**
 * Removes the folders `<prefix>-<pid>-*` of this user in `parent` whose process has ended. A pid
 * since taken by another process keeps its folder until that one ends too.
 */
export function removeEndedServiceFolders(parent: string, prefix: string): void {
  for (const dir of endedServiceFolders(parent, prefix)) rmSync(dir, { recursive: true, force: true });
}

/** The folders `<prefix>-<pid>-*` of this user in `parent` whose process has ended. */
export function endedServiceFolders(parent: string, prefix: string): string[] {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  const uid = process.getuid?.();
  return names
    .filter((name) => {
      const pid = Number(new RegExp(`^${prefix}-(\\d+)-`).exec(name)?.[1]);
      return pid > 0 && hasEnded(pid);
    })
    .map((name) => join(parent, name))
    .filter((dir) => {
      try {
        // A link is not followed, nor another user's folder touched.
        const stat = lstatSync(dir);
        return stat.isDirectory() && (uid === undefined || stat.uid === uid);
      } catch {
        return false;
      }
    });
}

function hasEnded(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    // EPERM: it runs, as another user.
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return isZombie(pid);
}

/**
 * A process that has exited but whose parent has not yet collected it still answers signal 0. A
 * service killed from a shell that has since exited stays so until init collects it, which some
 * inits (a container's, a sandbox's) do late or never: it runs nothing and holds nothing.
 */
function isZombie(pid: number): boolean {
  try {
    // `pid (comm) state ...`: the command may itself hold parentheses, so the last one ends it.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] === 'Z';
  } catch {
    return false;
  }
}
