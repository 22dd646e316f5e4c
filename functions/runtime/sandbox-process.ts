import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, chmodSync, constants as fsConstants, lstatSync, mkdirSync, mkdtempSync, readdirSync, statfsSync, statSync } from 'node:fs';
import { chmod, chown, copyFile, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import type { Jail } from './confinement.js';
import { removeTree } from './safe-remove.js';

/** The only PATH user code gets; interpreters are looked up here first so a job's uid can run them. */
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * True when jobs run under uids of their own (the service runs as root; see confinement.ts): the
 * directories they use must then be reachable by a uid other than ours.
 */
function jobsRunAsOtherUids(): boolean {
  return process.getuid?.() === 0;
}

/**
 * The complete environment of user code: the job's variables on top of a fixed minimum, as the
 * jail shows them (inside a network namespace: BASE_INTERNAL_URL and the proxy variables there).
 */
export function sandboxEnv(jobEnv: Record<string, string>, home: string, jail: Pick<Jail, 'jobEnv'>): Record<string, string> {
  const env: Record<string, string> = { PATH: SANDBOX_PATH, HOME: home, LANG: 'C.UTF-8' };
  // Copied in a loop rather than spread after the literal: once per job on the service's thread,
  // and the spread of an object built key by key took V8's slow path (see JobNetwork.jobEnv).
  const shown = jail.jobEnv(jobEnv);
  for (const name in shown) env[name] = shown[name]!;
  return env;
}

/**
 * Finds an interpreter, preferring the sandbox PATH: a copy under the parent's PATH may live in a
 * private directory (e.g. pyenv under /root) that the sandbox user cannot enter.
 */
export function resolveExecutable(name: string): string {
  const dirs = [...SANDBOX_PATH.split(delimiter), ...(process.env.PATH ?? '').split(delimiter)];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  throw new Error(`${name} was not found on PATH`);
}

export interface SandboxSpawn {
  /** The confinement the process runs in (its uid, cgroup, namespaces). */
  jail: Jail;
  /** Directories of the work root the process may see (inside namespaces nothing else is). */
  visibleDirs: string[];
  /** Directories it may read and never write wherever they are (an installed dependency tree). */
  readOnlyDirs?: string[];
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stdio: StdioOptions;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  error?: Error;
}

/** A sandboxed child with its lifecycle captured from the moment of spawn, so no event is missed. */
export interface SandboxProcess {
  child: ChildProcess;
  exited: Promise<ExitInfo>;
  /** Exit plus drained pipes (bounded, since a stray grandchild in another group may hold them). */
  closed: Promise<void>;
  kill(): void;
}

/**
 * Starts user code confined by its jail, in its own process group. The environment goes to the
 * process as its environment, never in argv, so `ps` shows no secret.
 */
export function spawnSandboxed(spec: SandboxSpawn): SandboxProcess {
  const { jail } = spec;
  const launch = jail.wrap(spec.command, spec.args, spec.visibleDirs, spec.readOnlyDirs);
  const child = spawn(launch.command, launch.args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: spec.stdio,
    detached: true,
    ...(launch.uid === undefined ? {} : { uid: launch.uid, gid: launch.uid }),
  });
  if (child.pid !== undefined) jail.started(child.pid);
  const exitedPromise = new Promise<ExitInfo>((resolveExit) => {
    child.once('exit', (code, signal) => resolveExit({ code, signal }));
    child.once('error', (error) => {
      if (child.pid === undefined) resolveExit({ code: null, signal: null, error });
    });
  });
  const pipesClosed = new Promise<void>((resolveClose) => child.once('close', () => resolveClose()));
  const closedPromise = exitedPromise.then(async (info) => {
    if (info.error) return;
    await Promise.race([pipesClosed, new Promise((r) => setTimeout(r, 250).unref())]);
  });
  const kill = () => {
    // The group kill takes bwrap down, and with it (die-with-parent) the job's PID namespace;
    // the cgroup kill catches whatever left the group where there are no namespaces.
    killProcessGroup(child);
    jail.killAll();
  };
  return { child, exited: exitedPromise, closed: closedPromise, kill };
}

/** Kills the child and everything it started that stayed in its process group. */
export function killProcessGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  // Also after the leader exited: members it left behind still carry its pid as group id.
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is already gone
  }
}

interface Referencable {
  ref?: () => unknown;
  unref?: () => unknown;
  destroyed?: boolean;
}

/**
 * Lets an idle child's handles stop holding the event loop open. A closed socket is skipped: on
 * one without a handle, `unref` would queue a listener for a 'connect' that never comes.
 */
export function setReferenced(handles: readonly unknown[], referenced: boolean): void {
  for (const handle of handles as (Referencable | null | undefined)[]) {
    if (!handle || handle.destroyed) continue;
    if (referenced) handle.ref?.();
    else handle.unref?.();
  }
}

export function randomName(prefix: string): string {
  return `${prefix}-${randomBytes(12).toString('hex')}`;
}

/** A directory only the job's uid may use: a job's cwd and HOME. */
export async function makeJobDir(path: string, uid: number | undefined): Promise<void> {
  await mkdir(path, { mode: 0o700 });
  if (uid !== undefined) await chown(path, uid, uid);
}

/** A root-owned directory the sandbox user may read but not change: the code it runs. */
export async function makeCodeDir(path: string): Promise<void> {
  await mkdir(path, { mode: 0o755 });
  await chmod(path, 0o755);
}

export async function writeCodeFile(path: string, content: string): Promise<void> {
  await writeFile(path, content, { mode: 0o644 });
  await chmod(path, 0o644);
}

export async function copyCodeFile(from: string, to: string): Promise<void> {
  await copyFile(from, to);
  await chmod(to, 0o644);
}

/** statfs(2)'s f_type of tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;
/**
 * tmpfs gives a directory a size of 20 bytes per entry, its two dot entries included (mm/shmem.c,
 * BOGO_DIRENT_SIZE), so an empty one is 40 bytes: one stat answers what a listing would.
 */
const EMPTY_TMPFS_DIR_BYTES = 40;

/**
 * How to tell that a job directory inside `parent` holds nothing (not even dotfiles), so the next
 * job may start in it; it is made private again when the job opened it up. On tmpfs (job slots)
 * one stat says both, where a listing and a chmod cost five syscalls on every run.
 */
export function emptyDirCheck(parent: string): (dir: string) => boolean {
  let sizedByEntries = false;
  try {
    sizedByEntries = statfsSync(parent).type === TMPFS_MAGIC;
  } catch {
    // unknown: list the directory
  }
  return (dir) => {
    try {
      const stats = lstatSync(dir);
      if (!stats.isDirectory()) return false;
      const empty = sizedByEntries ? stats.size === EMPTY_TMPFS_DIR_BYTES : readdirSync(dir).length === 0;
      if (!empty) return false;
      if ((stats.mode & 0o7777) !== 0o700) chmodSync(dir, 0o700);
      return true;
    } catch {
      return false;
    }
  };
}

export async function removeDir(path: string): Promise<void> {
  // Never fs.rm: a job may still be changing the tree (safe-remove.ts).
  await removeTree(path);
}

/**
 * Returns the directory job and process dirs go into. Job uids must be able to traverse
 * every ancestor; when the given one sits inside a private directory (e.g. the 0700 data dir), a
 * fresh directory under the system temp dir is used instead. Listing is denied (0711) so one job
 * cannot discover another's randomly named directory.
 */
export function prepareWorkRoot(workDir: string): string {
  const wanted = resolve(workDir);
  mkdirSync(wanted, { recursive: true, mode: 0o711 });
  if (!jobsRunAsOtherUids() || ancestorsTraversable(wanted)) {
    chmodSync(wanted, 0o711);
    return wanted;
  }
  const base = ancestorsTraversable(tmpdir()) ? tmpdir() : '/tmp';
  const fallback = mkdtempSync(join(base, 'svc-runtime-'));
  chmodSync(fallback, 0o711);
  return fallback;
}

function ancestorsTraversable(dir: string): boolean {
  for (let current = dirname(dir); ; current = dirname(current)) {
    if ((statSync(current).mode & 0o001) === 0) return false;
    if (current === dirname(current)) return true;
  }
}
