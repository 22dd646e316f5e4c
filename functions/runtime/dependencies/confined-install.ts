import { chown, lstat, mkdir, mkdtemp, readdir, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Confiner, Jail } from '../confinement.js';
import type { SlotNetwork } from '../job-network.js';
import { SANDBOX_PATH, spawnSandboxed } from '../sandbox-process.js';
import { removeTree } from './tree-cache.js';

/** What an installer printed, kept to its end: the lines that say why it failed. */
const OUTPUT_TAIL_BYTES = 64 * 1024;
/** How often the filesystem's free room is looked at while an installer runs. */
const DISK_CHECK_MS = 250;
/** The most files and directories an install may make (each takes an inode of the host's filesystem). */
export const MAX_INSTALL_ENTRIES = 500_000;
/**
 * How many installers of one kind (`prefix`: resolutions at create, installs off the run path)
 * run at once in one service; the others wait their turn. Each holds a job's uid and limits.
 */
export const MAX_CONCURRENT_INSTALLS = 4;

export interface ConfinedCommand {
  /** The working directory, owned by the jail's uid and the only one it may write. */
  dir: string;
  /** The jail the command runs in, opened by the caller (who made `dir` its uid's). */
  jail: Jail;
  command: string;
  args: string[];
  env: Record<string, string>;
  timeoutMs: number;
  /** When `timeoutMs` began to count (epoch ms; default now): commands that share one timeout. */
  startedAt?: number;
}

export interface ConfinedResult {
  ok: boolean;
  /** The end of what it printed (stdout and stderr as they came). */
  output: string;
}

/**
 * Runs a package installer (npm, pip) confined like a job: its own uid and cgroup, the system
 * read-only, the data directory hidden, no service credentials in its environment, and only its
 * own directory writable. Installing is untrusted work: a package's install script, where the
 * instance allows them, runs here too (README: Dependencies).
 */
export async function runConfined(spec: ConfinedCommand): Promise<ConfinedResult> {
  const diskLimit = spec.jail.limits.diskBytes;
  let overDisk: string | undefined;
  const disk = await watchDisk(spec.dir, diskLimit, (why) => {
    overDisk = why;
    proc.kill();
  });
  const proc = spawnSandboxed({
    jail: spec.jail,
    visibleDirs: [spec.dir],
    command: spec.command,
    args: spec.args,
    cwd: spec.dir,
    env: spec.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
  };
  proc.child.stdout?.on('data', collect);
  proc.child.stderr?.on('data', collect);
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      proc.kill();
    },
    Math.max(0, (spec.startedAt ?? Date.now()) + spec.timeoutMs - Date.now()),
  );
  try {
    const exit = await proc.exited;
    await proc.closed;
    disk.stop();
    if (exit.error) return { ok: false, output: `could not start ${spec.command}: ${exit.error.message}` };
    // The watch looks every DISK_CHECK_MS; what a quick install wrote since is counted here.
    overDisk ??= overLimit(await usage(spec.dir), diskLimit);
    if (overDisk) return { ok: false, output: `${output}\n${overDisk}` };
    if (timedOut) return { ok: false, output: `${output}\nthe install took longer than ${spec.timeoutMs / 1000}s` };
    const limit = spec.jail.limitError(exit);
    if (limit) return { ok: false, output: `${output}\n${limit.message}` };
    return { ok: exit.code === 0, output };
  } finally {
    clearTimeout(timer);
    disk.stop();
    proc.kill();
  }
}

/**
 * Watches what an install writes under `dir`, which has no disk quota of its own (a job's files
 * are in a tmpfs of SVC_JOB_DISK_MB; an install's are on the cache's filesystem, beside the
 * service's data): past `limit` bytes or MAX_INSTALL_ENTRIES entries, `exceeded` is called once.
 * Walking a large tree is costly, so the walk runs only when the filesystem's free room (or free
 * inodes) fell by more than the room left since the last walk.
 */
async function watchDisk(dir: string, limit: number, exceeded: (why: string) => void): Promise<{ stop(): void }> {
  const room = async () => {
    const fs = await statfs(dir);
    return { bytes: fs.bavail * fs.bsize, files: fs.ffree };
  };
  // The free room the filesystem would have if the install had written nothing.
  let baseline = await room().catch(() => undefined);
  let busy = false;
  let done = false;
  const timer = setInterval(() => {
    if (busy || done || !baseline) return;
    busy = true;
    void (async () => {
      const now = await room();
      if (baseline!.bytes - now.bytes <= limit && baseline!.files - now.files <= MAX_INSTALL_ENTRIES) return;
      const used = await usage(dir);
      const why = overLimit(used, limit);
      if (why && !done) {
        done = true;
        exceeded(why);
      } else baseline = { bytes: now.bytes + used.bytes, files: now.files + used.entries };
    })()
      .catch(() => undefined)
      .finally(() => (busy = false));
  }, DISK_CHECK_MS);
  timer.unref();
  return {
    stop: () => {
      done = true;
      clearInterval(timer);
    },
  };
}

function overLimit(used: { bytes: number; entries: number }, limit: number): string | undefined {
  if (used.bytes > limit) return `the install wrote more than the disk limit of ${Math.round(limit / 1024 / 1024)} MB (SVC_JOB_DISK_MB)`;
  if (used.entries > MAX_INSTALL_ENTRIES) return `the install made more than ${MAX_INSTALL_ENTRIES} files`;
  return undefined;
}

/** The bytes (allocated blocks) and entries under `dir`; what vanishes during the walk is not counted. */
async function usage(dir: string): Promise<{ bytes: number; entries: number }> {
  let bytes = 0;
  let entries = 0;
  const walk = async (path: string): Promise<void> => {
    const names = await readdir(path).catch(() => [] as string[]);
    for (const name of names) {
      const info = await lstat(join(path, name)).catch(() => null);
      if (!info) continue;
      entries++;
      bytes += Math.max(info.blocks * 512, info.isFile() ? info.size : 0);
      if (info.isDirectory()) await walk(join(path, name));
    }
  };
  await walk(dir);
  return { bytes, entries };
}

/**
 * The installer's last lines as a script's author reads them: its error lines when it marked
 * any, without the installer's own log paths or the working directory.
 */
export function lastLines(output: string, dir: string, errorPrefix: RegExp, count = 12): string {
  const lines = output
    .split('\n')
    .map((line) => line.replaceAll(dir, '.').trimEnd())
    .filter((line) => line.trim() && !/complete log of this run|A complete log/i.test(line));
  const errors = lines.filter((line) => errorPrefix.test(line));
  return (errors.length > 0 ? errors : lines).slice(-count).join('\n');
}

export interface InstallJailWork<T> {
  confiner: Confiner;
  /** Where the work directory is made (the cache's, traversable by a job uid). */
  parent: string;
  prefix: string;
  /** The network namespaces the installer runs in (install-proxy.ts); undefined: the host's network. */
  network?: SlotNetwork;
  /** Files written into the directory before the installer runs (its config), by name. */
  files: Record<string, string>;
  /**
   * `run` runs a command in the jail; the commands of one work share their timeout, counted from
   * the first. `replaceFiles` puts the installer's own files anew (see InstallFiles).
   */
  work: (dir: string, run: (command: string, args: string[], env: Record<string, string>, timeoutMs: number) => Promise<ConfinedResult>, replaceFiles: InstallFiles) => Promise<T>;
  /** Keeps the directory when `work` returns this (an install hands it to the cache). */
  keep?: (result: T) => boolean;
}

/**
 * Between two commands of one install: each named file is removed (whatever the jail's uid made
 * of it) and written anew with `text`, private to the uid, and the temporary directory (TMPDIR) is
 * emptied; a null text removes the file or directory only. The next command finds nothing of the
 * files the last one was given but what is written here.
 */
export type InstallFiles = (files: Record<string, string | null>) => Promise<void>;

/**
 * Runs `work` in a fresh directory owned by a new jail's uid (0700, private files 0600): the
 * installer's commands run in that jail. The directory is removed afterwards unless kept.
 */
export function inInstallJail<T>(spec: InstallJailWork<T>): Promise<T> {
  return installTurns(spec.confiner, spec.prefix)(() => installInJail(spec));
}

async function installInJail<T>(spec: InstallJailWork<T>): Promise<T> {
  const jail = await spec.confiner.openForInstall(spec.parent, undefined, spec.network);
  const dir = await mkdtemp(join(spec.parent, `${spec.prefix}-`)).catch(async (error: unknown) => {
    await jail.release();
    throw error;
  });
  let kept = false;
  try {
    const own = async (path: string) => {
      if (jail.uid !== undefined) await chown(path, jail.uid, jail.uid);
    };
    await own(dir);
    const putFiles = async (files: Record<string, string | null>) => {
      for (const name of ['.tmp', ...Object.keys(files)]) await removeTree(join(dir, name));
      await mkdir(join(dir, '.tmp'));
      await own(join(dir, '.tmp'));
      for (const [name, text] of Object.entries(files)) {
        if (text === null) continue;
        await writeFile(join(dir, name), text, { mode: 0o600, flag: 'wx' });
        await own(join(dir, name));
      }
    };
    await putFiles(spec.files);
    let startedAt: number | undefined;
    const result = await spec.work(
      dir,
      (command, args, env, timeoutMs) =>
        // GIT_ALLOW_PROTOCOL names no protocol: git, which npm and pip run for a git dependency a
        // package names, refuses them all (http, ssh, file...), and knows nothing of their proxy.
        // In a network namespace, the proxy variables lead to its egress proxy.
        runConfined({
          dir,
          jail,
          command,
          args,
          env: jail.jobEnv({ PATH: SANDBOX_PATH, HOME: dir, TMPDIR: join(dir, '.tmp'), LANG: 'C.UTF-8', GIT_ALLOW_PROTOCOL: 'none', ...env }),
          timeoutMs,
          startedAt: (startedAt ??= Date.now()),
        }),
      putFiles,
    );
    kept = spec.keep?.(result) ?? false;
    return result;
  } finally {
    await jail.release();
    if (!kept) await removeTree(dir);
  }
}

/** Turns of each kind of installer, per Confiner (one per service): MAX_CONCURRENT_INSTALLS at once, first come first served. */
const turnsOf = new WeakMap<Confiner, Map<string, LimitFunction>>();

function installTurns(confiner: Confiner, kind: string): LimitFunction {
  let kinds = turnsOf.get(confiner);
  if (!kinds) turnsOf.set(confiner, (kinds = new Map()));
  let turns = kinds.get(kind);
  if (!turns) kinds.set(kind, (turns = pLimit(MAX_CONCURRENT_INSTALLS)));
  return turns;
}
