import { chown, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Confiner, Jail } from '../confinement.js';
import { SANDBOX_PATH, spawnSandboxed } from '../sandbox-process.js';
import { removeTree } from './tree-cache.js';

/** What an installer printed, kept to its end: the lines that say why it failed. */
const OUTPUT_TAIL_BYTES = 64 * 1024;

export interface ConfinedCommand {
  /** The working directory, owned by the jail's uid and the only one it may write. */
  dir: string;
  /** The jail the command runs in, opened by the caller (who made `dir` its uid's). */
  jail: Jail;
  command: string;
  args: string[];
  env: Record<string, string>;
  timeoutMs: number;
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
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill();
  }, spec.timeoutMs);
  try {
    const exit = await proc.exited;
    await proc.closed;
    if (exit.error) return { ok: false, output: `could not start ${spec.command}: ${exit.error.message}` };
    if (timedOut) return { ok: false, output: `${output}\nthe install took longer than ${spec.timeoutMs / 1000}s` };
    const limit = spec.jail.limitError(exit);
    if (limit) return { ok: false, output: `${output}\n${limit.message}` };
    return { ok: exit.code === 0, output };
  } finally {
    clearTimeout(timer);
    proc.kill();
  }
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
  /** Files written into the directory before the installer runs (its config), by name. */
  files: Record<string, string>;
  work: (dir: string, run: (command: string, args: string[], env: Record<string, string>, timeoutMs: number) => Promise<ConfinedResult>) => Promise<T>;
  /** Keeps the directory when `work` returns this (an install hands it to the cache). */
  keep?: (result: T) => boolean;
}

/**
 * Runs `work` in a fresh directory owned by a new jail's uid (0700, private files 0600): the
 * installer's commands run in that jail. The directory is removed afterwards unless kept.
 */
export async function inInstallJail<T>(spec: InstallJailWork<T>): Promise<T> {
  const jail = await spec.confiner.openForInstall(spec.parent);
  const dir = await mkdtemp(join(spec.parent, `${spec.prefix}-`));
  let kept = false;
  try {
    const own = async (path: string) => {
      if (jail.uid !== undefined) await chown(path, jail.uid, jail.uid);
    };
    await own(dir);
    await mkdir(join(dir, '.tmp'));
    await own(join(dir, '.tmp'));
    for (const [name, text] of Object.entries(spec.files)) {
      await writeFile(join(dir, name), text, { mode: 0o600 });
      await own(join(dir, name));
    }
    const result = await spec.work(dir, (command, args, env, timeoutMs) =>
      runConfined({ dir, jail, command, args, env: { PATH: SANDBOX_PATH, HOME: dir, TMPDIR: join(dir, '.tmp'), LANG: 'C.UTF-8', ...env }, timeoutMs }),
    );
    kept = spec.keep?.(result) ?? false;
    return result;
  } finally {
    await jail.release();
    if (!kept) await removeTree(dir);
  }
}
