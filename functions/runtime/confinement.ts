import { spawnSync } from 'node:child_process';
import { accessSync, constants as fsConstants, existsSync, statSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JobError } from '../ports.js';
import { JobCgroup, type CgroupKind } from './job-cgroup.js';
import { DEFAULT_LIMITS, formatBytes, type ResourceLimits } from './job-limits.js';

const BWRAP = '/usr/bin/bwrap';

/** The directories a jail replaces with an empty tmpfs of its own. */
const PRIVATE_DIRS = ['/tmp', '/dev/shm'];

/**
 * The service's own installation (package.json's folder): the shims, client libraries and
 * interpreters jobs run with live in it. Found from this module, built or not.
 */
const INSTALL_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dir === dirname(dir)) return from;
  }
}

const isInside = (path: string, dir: string) => path === dir || path.startsWith(dir + sep);

/** Whether any uid may walk down to `dir` (o+x on it and every ancestor). */
function traversableByAll(dir: string): boolean {
  for (let current = dir; ; current = dirname(current)) {
    if ((statSync(current).mode & 0o001) === 0) return false;
    if (current === dirname(current)) return true;
  }
}

/**
 * An installation under /tmp (a clone there, say) would vanish behind the jail's private /tmp, so
 * it comes back read-only. Only where a job's uid could reach it anyway: bwrap runs as that uid and
 * cannot bind what it may not enter (a 0700 temp dir holding a bundle, say).
 */
const REBOUND_INSTALL = PRIVATE_DIRS.some((dir) => isInside(INSTALL_ROOT, dir)) && traversableByAll(INSTALL_ROOT) ? INSTALL_ROOT : null;

export interface ConfinementOptions {
  /** Job uids come from here, one per running process; only used when the service runs as root. */
  uidRange?: { first: number; count: number };
  limits?: ResourceLimits;
  /** Paths jobs must not see at all (data dir, key files), hidden under an empty tmpfs. */
  hiddenPaths?: string[];
}

/** What the runtime can enforce on this machine; the service prints it at start and serves it. */
export interface ConfinementStatus {
  /** `namespaces`: bubblewrap user+PID+mount namespaces; `uid`: uid-per-job only; `none`: not root. */
  isolation: 'namespaces' | 'uid' | 'none';
  memory: `cgroup-${CgroupKind}` | 'rlimit-data';
  limits: ResourceLimits;
  /** Why something stronger is not used, when it is not. */
  notes: string[];
}

/** The confinement of one sandboxed process: its uid, its cgroup, and how to launch into them. */
export interface Jail {
  readonly uid: number | undefined;
  /**
   * The command line that starts `command` confined, seeing only `visibleDirs` of the work root,
   * and `readOnlyDirs` (installed dependency trees) read-only even where they would be hidden.
   */
  wrap(command: string, args: string[], visibleDirs: string[], readOnlyDirs?: string[]): { command: string; args: string[] };
  /**
   * True when more processes live in the jail than the interpreter needs (bwrap's two plus the
   * interpreter, or the interpreter alone): a job left children behind. False where the kernel
   * cannot tell (no cgroups); the PID namespace still ends them with the process.
   */
  hasLeftovers(): boolean;
  /** The limit the jail hit, as a job error; checked while the job runs and when it ends. */
  limitError(exit?: { code: number | null; signal: NodeJS.Signals | null }): JobError | undefined;
  killAll(): void;
  /** Memory the jail's processes are charged now (its cgroup), or undefined without a cgroup. */
  memoryBytes(): number | undefined;
  /** Kills what is left, deletes the cgroup and gives the uid back. */
  release(): Promise<void>;
}

/**
 * Decides once, at start, how jobs are confined here and hands out jails. Never silently
 * unconfined: `status` says what holds, and the service reports it.
 */
export class Confiner {
  readonly status: ConfinementStatus;
  private readonly freeUids: number[] = [];
  private readonly cgroupLayout: Parameters<typeof JobCgroup.create>[0] | undefined;

  constructor(private readonly options: ConfinementOptions = {}) {
    const limits = options.limits ?? DEFAULT_LIMITS;
    const notes: string[] = [];
    const root = process.getuid?.() === 0;
    const range = options.uidRange ?? { first: 200000, count: 1000 };
    if (root) for (let i = 0; i < range.count; i++) this.freeUids.push(range.first + i);
    let isolation: ConfinementStatus['isolation'] = 'none';
    if (!root) notes.push('the service does not run as root: jobs run as its own user, without a uid per job');
    else {
      const probe = probeNamespaces(range.first);
      isolation = probe ? 'uid' : 'namespaces';
      if (probe) notes.push(`no namespaces (${probe}): uid per job and limits only`);
    }
    const cgroup = root ? JobCgroup.probe() : { reason: 'not root' };
    if ('layout' in cgroup) this.cgroupLayout = cgroup.layout;
    else notes.push(`no cgroup (${cgroup.reason}): memory bounded per process by RLIMIT_DATA, processes per uid by RLIMIT_NPROC`);
    this.status = { isolation, memory: this.cgroupLayout ? `cgroup-${this.cgroupLayout.kind}` : 'rlimit-data', limits, notes };
  }

  /** One line for the start banner and logs. */
  describe(): string {
    const { isolation, memory, limits, notes } = this.status;
    const parts = [
      `jobs confined by ${isolation === 'namespaces' ? 'bubblewrap namespaces + uid per job' : isolation === 'uid' ? 'uid per job' : 'NOTHING (not root)'}`,
      `memory ${formatBytes(limits.memoryBytes)} (${memory}), ${limits.processes} processes, ${limits.cpuSeconds}s CPU, files ${formatBytes(limits.fileBytes)}, ${limits.openFiles} open files`,
    ];
    return [parts.join('; '), ...notes].join('\n  ');
  }

  /** A jail with its own uid and cgroup; `limits` may lower the instance's (a workspace setting). */
  open(limits: Partial<ResourceLimits> = {}): Jail {
    const effective = lowerOf(this.status.limits, limits);
    const uid = this.freeUids.shift();
    if (this.status.isolation !== 'none' && uid === undefined) {
      throw new Error('no free job uid: SVC_JOB_UID_RANGE is exhausted');
    }
    let cgroup: JobCgroup | undefined;
    try {
      cgroup = this.cgroupLayout ? JobCgroup.create(this.cgroupLayout, effective, uid) : undefined;
    } catch (error) {
      if (uid !== undefined) this.freeUids.push(uid);
      throw error;
    }
    return new ProcessJail(this, uid, cgroup, effective, this.options.hiddenPaths ?? []);
  }

  /** @internal */
  giveBack(uid: number): void {
    this.freeUids.push(uid);
  }
}

class ProcessJail implements Jail {
  private released: Promise<void> | undefined;
  private readonly refusedBefore: number;

  constructor(
    private readonly confiner: Confiner,
    readonly uid: number | undefined,
    private readonly cgroup: JobCgroup | undefined,
    private readonly limits: ResourceLimits,
    private readonly hiddenPaths: string[],
  ) {
    this.refusedBefore = cgroup?.forksRefused() ?? 0;
  }

  wrap(command: string, args: string[], visibleDirs: string[], readOnlyDirs: string[] = []): { command: string; args: string[] } {
    const { limits } = this;
    const procs = this.cgroup?.procsFiles ?? [];
    // The launcher joins the cgroup and sets the rlimits as the job's uid, then becomes the job.
    // RLIMIT_NPROC counts per uid, and each job has its own: a per-job bound even without cgroups.
    const ulimits = [
      `ulimit -n ${limits.openFiles}`,
      `ulimit -f ${Math.ceil(limits.fileBytes / 512)}`,
      `ulimit -t ${limits.cpuSeconds}`,
      this.uid === undefined ? '' : `ulimit -p ${limits.processes + 64}`,
      this.cgroup ? '' : `ulimit -d ${Math.ceil((limits.memoryBytes * 2) / 1024)}`,
    ].filter(Boolean);
    const script = `for f in ${procs.map((_, i) => `"$${i + 1}"`).join(' ')}; do echo $$ > "$f" || exit 125; done; ${ulimits.join('; ')}; shift ${procs.length}; exec "$@"`;
    const inner = this.confiner.status.isolation === 'namespaces' ? bwrapArgs(command, args, visibleDirs, this.hiddenPaths, limits, readOnlyDirs) : [command, ...args];
    return { command: '/bin/sh', args: ['-c', script, 'svc-launch', ...procs, ...inner] };
  }

  hasLeftovers(): boolean {
    if (!this.cgroup) return false;
    const own = this.confiner.status.isolation === 'namespaces' ? 3 : 1;
    return this.cgroup.processCount() > own;
  }

  limitError(exit?: { code: number | null; signal: NodeJS.Signals | null }): JobError | undefined {
    // The kernel counts an OOM kill just after sending the SIGKILL, so the exit may be seen first:
    // a process killed while the group was at its memory limit counts as an OOM kill too.
    const killed = exit?.signal === 'SIGKILL' || exit?.code === 128 + 9;
    if (this.cgroup && (this.cgroup.oomKills() > 0 || (killed && this.cgroup.memoryLimitHits() > 0))) {
      return { name: 'MemoryLimitExceeded', message: `memory limit ${formatBytes(this.limits.memoryBytes)} exceeded` };
    }
    if (this.cgroup && this.cgroup.forksRefused() > this.refusedBefore) {
      return { name: 'ProcessLimitExceeded', message: `process limit ${this.limits.processes} reached` };
    }
    // bwrap reports a child killed by a signal as 128 + the signal number.
    if (exit && (exit.signal === 'SIGXCPU' || exit.code === 128 + 24)) {
      return { name: 'CpuLimitExceeded', message: `CPU time limit ${this.limits.cpuSeconds}s exceeded` };
    }
    return undefined;
  }

  killAll(): void {
    this.cgroup?.killAll();
  }

  memoryBytes(): number | undefined {
    return this.cgroup?.memoryUsage();
  }

  release(): Promise<void> {
    this.released ??= (async () => {
      await this.cgroup?.removeWhenEmpty();
      if (this.uid !== undefined) this.confiner.giveBack(this.uid);
    })();
    return this.released;
  }
}

/**
 * Own user, PID, IPC and UTS namespaces; the system read-only; a private /tmp, /dev/shm and /proc;
 * the service's data hidden; only the job's own directories visible, writable where the uid owns them.
 */
function bwrapArgs(command: string, args: string[], visibleDirs: string[], hiddenPaths: string[], limits: ResourceLimits, readOnlyDirs: string[] = []): string[] {
  const tmpSize = String(limits.memoryBytes);
  const out = ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  out.push('--die-with-parent', '--new-session', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc');
  for (const dir of PRIVATE_DIRS) out.push('--size', tmpSize, '--tmpfs', dir);
  // Before the data dir inside it is hidden again.
  if (REBOUND_INSTALL) out.push('--ro-bind', REBOUND_INSTALL, REBOUND_INSTALL);
  for (const path of hiddenPaths) if (existsSync(path)) out.push('--tmpfs', path);
  for (const dir of visibleDirs) out.push('--bind', dir, dir);
  for (const dir of readOnlyDirs) out.push('--ro-bind', dir, dir);
  out.push('--', command, ...args);
  return [BWRAP, ...out];
}

/** Returns why user+PID namespaces cannot be used here, or undefined when they work. */
function probeNamespaces(uid: number): string | undefined {
  try {
    accessSync(BWRAP, fsConstants.X_OK);
  } catch {
    return `${BWRAP} not installed (Debian package bubblewrap)`;
  }
  const result = spawnSync(BWRAP, ['--unshare-user', '--unshare-pid', '--ro-bind', '/', '/', '--proc', '/proc', '--', '/bin/true'], {
    uid,
    gid: uid,
    env: {},
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (result.status === 0) return undefined;
  return (result.stderr || result.error?.message || `bwrap exited with ${result.status}`).trim();
}

function lowerOf(base: ResourceLimits, wanted: Partial<ResourceLimits>): ResourceLimits {
  const pick = (key: keyof ResourceLimits) => Math.min(base[key], wanted[key] ?? base[key]);
  return {
    memoryBytes: pick('memoryBytes'),
    processes: pick('processes'),
    cpuSeconds: pick('cpuSeconds'),
    fileBytes: pick('fileBytes'),
    openFiles: pick('openFiles'),
  };
}
