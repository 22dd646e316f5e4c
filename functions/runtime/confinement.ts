import { chownSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { inSystemView, PRIVATE_DIRS, REBOUND_INSTALL, SYSTEM_VIEW } from './jail-view.js';
import type { JobError } from '../ports.js';
import { AddressAllowList } from '../core/common/address-rules.js';
import { JobCgroup, type CgroupKind } from './job-cgroup.js';
import { DEFAULT_LIMITS, formatBytes, type ResourceLimits } from './job-limits.js';
import { JobNetwork, type NetworkSetting, type SlotNetwork } from './job-network.js';
import type { JobSlot } from './job-slots.js';
import { largestCpuSeconds } from './process-tree.js';
import { BWRAP, NSENTER, probeConfinement, probeNamespaces, probeNestedUserns, probeNetworkNamespace, type ConfinementProbes } from './confinement-probes.js';



export interface ConfinementOptions {
  /** Job uids come from here, one per running process; only used when the service runs as root. */
  uidRange?: { first: number; count: number };
  limits?: ResourceLimits;
  /** Paths jobs must not see at all (data dir, key files), hidden under an empty tmpfs. */
  hiddenPaths?: string[];
  /** The network boundary (default: on, nothing allowed past it); `mode: 'host'` turns it off. */
  network?: NetworkSetting;
}

/** What the runtime can enforce on this machine; the service prints it at start and serves it. */
export interface ConfinementStatus {
  /** `namespaces`: bubblewrap user+PID+mount namespaces; `uid`: uid-per-job only; `none`: not root. */
  isolation: 'namespaces' | 'uid' | 'none';
  memory: `cgroup-${CgroupKind}` | 'rlimit-data';
  /**
   * `namespace`: each process in its own network namespace, out only through the egress proxy, and
   * its files in a tmpfs of `limits.diskBytes`; `host`: the host's network, files in the work dir.
   */
  network: 'namespace' | 'host';
  limits: ResourceLimits;
  /** Why something stronger is not used, when it is not. */
  notes: string[];
}

/** The confinement of one sandboxed process: its uid, its cgroup, and how to launch into them. */
export interface Jail {
  readonly uid: number | undefined;
  /** Where the process's directories go: its own tmpfs (the disk quota), else the work root. */
  readonly workDir: string;
  /**
   * The command line that starts `command` confined, seeing only `visibleDirs` of the work root,
   * and `readOnlyDirs` (installed dependency trees) read-only even where they would be hidden,
   * and the uid to spawn it as (undefined: as the service, when a helper switches itself).
   */
  wrap(command: string, args: string[], visibleDirs: string[], readOnlyDirs?: string[]): { command: string; args: string[]; uid: number | undefined };
  /** The job's environment as the process must see it (inside a namespace: the API and proxy there). */
  jobEnv(env: Record<string, string>): Record<string, string>;
  /** The disk quota, as a job error, when the process's tmpfs is full (asked when a job failed). */
  diskQuotaError(cause?: string): JobError | undefined;
  /**
   * True when more processes live in the jail than the interpreter needs (bwrap's two plus the
   * interpreter, or the interpreter alone): a job left children behind. False where the kernel
   * cannot tell (no cgroups); the PID namespace still ends them with the process.
   */
  hasLeftovers(): boolean;
  /** The process it confines, once spawned: its CPU time is watched while a job runs. */
  started(pid: number): void;
  /**
   * The limit the jail hit, as a job error, asked every few hundred milliseconds while a job runs;
   * also notes the CPU time the process has used, which tells a kill at the CPU limit from others.
   */
  runningLimitError(): JobError | undefined;
  /** The limit the jail hit, as a job error; asked when the job ends, with the exit if the process ended. */
  limitError(exit?: { code: number | null; signal: NodeJS.Signals | null }): JobError | undefined;
  killAll(): void;
  /** Memory the jail's processes are charged now (its cgroup), or undefined without a cgroup. */
  memoryBytes(): number | undefined;
  /** What its files (its directories, /tmp and /dev/shm) take now, in bytes; 0 where they have no quota. */
  diskBytes(): number;
  /**
   * The limits of each job it runs (the instance's, lowered by the workspace's). `cpuSeconds` is a
   * job's: a process that serves many jobs (`warm`) may use twice that in all, and the warm pool
   * replaces it once it has used this much, so every job it serves has at least this much left
   * (RLIMIT_CPU counts a process's whole life, not a job).
   */
  readonly limits: ResourceLimits;
  /** Kills what is left, deletes the cgroup and gives the uid back. */
  release(): Promise<void>;
}

const DEFAULT_UID_RANGE = { first: 200000, count: 1000 };

/**
 * Decides once, at start, how jobs are confined here and hands out jails. Never silently
 * unconfined: `status` says what holds, and the service reports it.
 */
export class Confiner {
  readonly status: ConfinementStatus;
  private readonly freeUids: number[] = [];
  private readonly cgroupLayout: Parameters<typeof JobCgroup.create>[0] | undefined;
  private readonly networkSetting: NetworkSetting;
  /** @internal bubblewrap's options beyond the namespaces every jail gets (what this machine allows). */
  readonly bwrapOptions: string[] = [];

  /**
   * A Confiner whose probes of the machine ran at once and without blocking (the local service
   * starts with this); `new Confiner` probes synchronously.
   */
  static async probe(options: ConfinementOptions = {}): Promise<Confiner> {
    if (process.getuid?.() !== 0) return new Confiner(options);
    const uid = (options.uidRange ?? DEFAULT_UID_RANGE).first;
    return new Confiner(options, await probeConfinement(uid, options.network?.mode !== 'host'));
  }

  /** `probes`: the answers of `probeConfinement`, when asked already; else asked here. */
  constructor(
    private readonly options: ConfinementOptions = {},
    probes?: ConfinementProbes,
  ) {
    const limits = options.limits ?? DEFAULT_LIMITS;
    const notes: string[] = [];
    const root = process.getuid?.() === 0;
    const range = options.uidRange ?? DEFAULT_UID_RANGE;
    if (root) for (let i = 0; i < range.count; i++) this.freeUids.push(range.first + i);
    let isolation: ConfinementStatus['isolation'] = 'none';
    if (!root) notes.push('the service does not run as root: jobs run as its own user, without a uid per job');
    else {
      const probe = probes ? probes.namespaces : probeNamespaces(range.first);
      isolation = probe ? 'uid' : 'namespaces';
      if (probe) notes.push(`no namespaces (${probe}): uid per job and limits only`);
      else {
        const nested = probes ? probes.nestedUserns : probeNestedUserns(range.first);
        if (nested) notes.push(`jobs may make user namespaces of their own (bwrap --disable-userns: ${nested})`);
        else this.bwrapOptions.push('--disable-userns');
      }
    }
    const cgroup = root ? JobCgroup.probe() : { reason: 'not root' };
    if ('layout' in cgroup) this.cgroupLayout = cgroup.layout;
    else notes.push(`no cgroup (${cgroup.reason}): memory bounded per process by RLIMIT_DATA, processes per uid by RLIMIT_NPROC`);
    let network: ConfinementStatus['network'] = 'host';
    const setting = (this.networkSetting = options.network ?? { mode: 'boundary', allow: new AddressAllowList(undefined, 'network allow-list') });
    if (setting.mode === 'host') notes.push('SVC_JOB_NETWORK=host: jobs share the host\'s network, and their files go to the work dir without a disk quota');
    else if (isolation !== 'namespaces') notes.push('no network boundary (it needs the namespaces): jobs share the host\'s network');
    else {
      const probe = probes ? probes.network : probeNetworkNamespace();
      if (probe) notes.push(`no network boundary (${probe}): jobs share the host's network`);
      else network = 'namespace';
    }
    this.status = {
      isolation,
      memory: this.cgroupLayout ? `cgroup-${this.cgroupLayout.kind}` : 'rlimit-data',
      network,
      limits,
      notes,
    };
  }

  /**
   * The addresses of the refused ranges an installer may reach anyway (SVC_JOB_NETWORK_ALLOW): its
   * traffic goes through an egress proxy (dependencies/install-proxy.ts). null where the instance
   * set SVC_JOB_NETWORK=host: installs, like jobs, then reach the host's network directly.
   */
  installAllowList(): AddressAllowList | null {
    return this.networkSetting.mode === 'host' ? null : this.networkSetting.allow;
  }

  /** One line for the start banner and logs. */
  describe(): string {
    const { isolation, memory, limits, notes } = this.status;
    const { network } = this.status;
    // Only in the start line: GET /api/runtime serves the status to anyone, and the allowed
    // addresses are the instance's internal ones.
    const networkAllow = this.networkSetting.allow.entries;
    const parts = [
      `jobs confined by ${isolation === 'namespaces' ? 'bubblewrap namespaces + uid per job' : isolation === 'uid' ? 'uid per job' : 'NOTHING (not root)'}`,
      `memory ${formatBytes(limits.memoryBytes)} (${memory}), ${limits.processes} processes, ${limits.cpuSeconds}s CPU, files ${formatBytes(limits.fileBytes)}, ${limits.openFiles} open files`,
      network === 'namespace'
        ? `network: own namespace, out through the egress proxy${networkAllow.length ? ` (allowed: ${networkAllow.join(', ')})` : ''}; disk ${formatBytes(limits.diskBytes)}`
        : 'network: the host\'s',
    ];
    return [parts.join('; '), ...notes].join('\n  ');
  }

  /**
   * The jails of one runner, whose directories live under `workRoot`; with the network boundary,
   * its namespaces and tmpfs slots (job-slots.ts) are closed with `close`.
   */
  forRunner(workRoot: string): JailSource {
    const network = this.status.network === 'namespace' ? new JobNetwork(this.networkSetting.allow) : undefined;
    const releasing = new Set<Promise<void>>();
    return {
      open: (limits, use) => this.open(workRoot, network, limits, use, releasing),
      close: async () => {
        // A one-shot job is answered before its jail is back (one-shot.ts): its slot and cgroup first.
        await Promise.all(releasing);
        await network?.close();
      },
    };
  }

  /**
   * A jail for installing a script's packages (runtime/dependencies): a job's uid, cgroup and
   * filesystem rules. With `network` (where the network boundary holds, dependencies/install-proxy.ts)
   * the installer runs in a network namespace of its own whose only way out is that network's
   * proxy, which reaches the registry the instance is configured with (often a private one on the
   * operator's network or loopback) and otherwise only what a job may reach; without it, on the
   * host's network. The installer is npm or pip itself; packages' install scripts are off unless
   * the instance allows them.
   */
  openForInstall(workRoot: string, limits?: Partial<ResourceLimits>, network?: SlotNetwork): Promise<Jail> {
    return this.open(workRoot, network, limits, 'one job');
  }

  /** A jail with its own uid, cgroup and slot; `limits` may lower the instance's (a workspace setting). */
  private async open(
    workRoot: string,
    network: SlotNetwork | undefined,
    limits: Partial<ResourceLimits> = {},
    use: JailUse = 'one job',
    releasing?: Set<Promise<void>>,
  ): Promise<Jail> {
    const effective = lowerOf(this.status.limits, limits);
    const uid = this.freeUids.shift();
    if (this.status.isolation !== 'none' && uid === undefined) {
      throw new Error('no free job uid: SVC_JOB_UID_RANGE is exhausted');
    }
    let cgroup: JobCgroup | undefined;
    let slot: JobSlot | undefined;
    try {
      cgroup = this.cgroupLayout ? JobCgroup.create(this.cgroupLayout, effective, uid) : undefined;
      if (network) {
        slot = await network.slots.take(effective.diskBytes);
        // The process's own /tmp and /dev/shm, inside its quota.
        for (const dir of ['tmp', 'shm']) {
          mkdirSync(join(slot.dir, dir), { mode: 0o700 });
          if (uid !== undefined) chownSync(join(slot.dir, dir), uid, uid);
        }
      }
    } catch (error) {
      cgroup?.remove();
      if (slot) await network?.slots.give(slot);
      if (uid !== undefined) this.freeUids.push(uid);
      throw error;
    }
    return new ProcessJail(this, uid, cgroup, effective, use, this.options.hiddenPaths ?? [], workRoot, network && slot ? { network, slot } : undefined, releasing);
  }

  /** @internal */
  giveBack(uid: number): void {
    this.freeUids.push(uid);
  }
}

/** Whether a jail's process serves one job or stays warm for many (see `Jail.limits`). */
export type JailUse = 'one job' | 'warm';

/** Hands out the jails of one runner (Confiner.forRunner). */
export interface JailSource {
  open(limits?: Partial<ResourceLimits>, use?: JailUse): Promise<Jail>;
  close(): Promise<void>;
}

class ProcessJail implements Jail {
  private released: Promise<void> | undefined;
  private readonly refusedBefore: number;
  private pid: number | undefined;
  /** The most CPU time, in seconds, one process of the jail was seen to have used while a job ran. */
  private cpuSeen = 0;
  readonly workDir: string;

  constructor(
    private readonly confiner: Confiner,
    readonly uid: number | undefined,
    private readonly cgroup: JobCgroup | undefined,
    readonly limits: ResourceLimits,
    private readonly use: JailUse,
    private readonly hiddenPaths: string[],
    workRoot: string,
    private readonly boundary: { network: SlotNetwork; slot: JobSlot } | undefined,
    /** Where releases in flight are kept until done, for the runner's close to wait on. */
    private readonly releasing?: Set<Promise<void>>,
  ) {
    this.refusedBefore = cgroup?.forksRefused() ?? 0;
    this.workDir = boundary?.slot.dir ?? workRoot;
  }

  jobEnv(env: Record<string, string>): Record<string, string> {
    return this.boundary ? this.boundary.network.jobEnv(env) : env;
  }

  diskQuotaError(cause?: string): JobError | undefined {
    if (!this.boundary?.slot.isFull()) return undefined;
    const message = `disk quota ${formatBytes(this.limits.diskBytes)} exceeded (the job's files, /tmp and /dev/shm)`;
    return { name: 'DiskQuotaExceeded', message: cause ? `${message}: ${cause}` : message };
  }

  wrap(command: string, args: string[], visibleDirs: string[], readOnlyDirs: string[] = []): { command: string; args: string[]; uid: number | undefined } {
    const { limits } = this;
    const procs = this.cgroup?.procsFiles ?? [];
    // The launcher joins the cgroup and sets the rlimits as the job's uid, then becomes the job.
    // RLIMIT_NPROC counts per uid, and each job has its own: a per-job bound even without cgroups.
    const ulimits = [
      `ulimit -n ${limits.openFiles}`,
      `ulimit -f ${Math.ceil(limits.fileBytes / 512)}`,
      // The soft limit sends SIGXCPU, which the job's error names; a process that ignores it is
      // killed a second later. Soft first: the kernel refuses a hard limit below the soft one.
      `ulimit -St ${this.processCpuSeconds}`,
      `ulimit -Ht ${this.processCpuSeconds + 1}`,
      this.uid === undefined ? '' : `ulimit -p ${limits.processes + 64}`,
      this.cgroup ? '' : `ulimit -d ${Math.ceil((limits.memoryBytes * 2) / 1024)}`,
    ].filter(Boolean);
    const script = `for f in ${procs.map((_, i) => `"$${i + 1}"`).join(' ')}; do echo $$ > "$f" || exit 125; done; ${ulimits.join('; ')}; shift ${procs.length}; exec "$@"`;
    const inner = this.confiner.status.isolation === 'namespaces' ? bwrapArgs(command, args, visibleDirs, this.hiddenPaths, limits, this.boundary?.slot, readOnlyDirs, this.confiner.bwrapOptions) : [command, ...args];
    const launch = ['-c', script, 'svc-launch', ...procs, ...inner];
    if (!this.boundary || this.uid === undefined) return { command: '/bin/sh', args: launch, uid: this.uid };
    // Joining the namespace takes root; nsenter drops to the job's uid (and no other group) right after.
    const uid = String(this.uid);
    return { command: NSENTER, args: [`--net=${this.boundary.slot.netns}`, '-S', uid, '-G', uid, '--', '/bin/sh', ...launch], uid: undefined };
  }

  hasLeftovers(): boolean {
    if (!this.cgroup) return false;
    const own = this.confiner.status.isolation === 'namespaces' ? 3 : 1;
    return this.cgroup.processCount() > own;
  }

  started(pid: number): void {
    this.pid = pid;
    this.cpuSeen = 0;
  }

  runningLimitError(): JobError | undefined {
    if (this.pid !== undefined) this.cpuSeen = Math.max(this.cpuSeen, largestCpuSeconds(this.pid));
    return this.limitError();
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
    // A process that ignores SIGXCPU (a handler, SIG_IGN, `trap '' XCPU`) is killed at the hard
    // limit a CPU second later: a SIGKILL after it was seen past the soft limit is that kill.
    if (exit && (exit.signal === 'SIGXCPU' || exit.code === 128 + 24 || (killed && this.cpuSeen >= this.processCpuSeconds))) {
      return { name: 'CpuLimitExceeded', message: `CPU time limit ${this.limits.cpuSeconds}s exceeded` };
    }
    if (exit && (exit.code !== 0 || exit.signal)) return this.diskQuotaError();
    return undefined;
  }

  killAll(): void {
    this.cgroup?.killAll();
  }

  memoryBytes(): number | undefined {
    return this.cgroup?.memoryUsage();
  }

  diskBytes(): number {
    return this.boundary?.slot.usedBytes() ?? 0;
  }

  private get processCpuSeconds(): number {
    return this.use === 'warm' ? 2 * this.limits.cpuSeconds : this.limits.cpuSeconds;
  }

  release(): Promise<void> {
    this.released ??= (async () => {
      await this.cgroup?.removeWhenEmpty();
      if (this.uid !== undefined) this.confiner.giveBack(this.uid);
      // Nothing of the process is left to hold a socket or a file: the slot may serve another.
      if (this.boundary) await this.boundary.network.slots.give(this.boundary.slot);
    })();
    const released = this.released;
    if (this.releasing && !this.releasing.has(released)) {
      this.releasing.add(released);
      void released.finally(() => this.releasing?.delete(released));
    }
    return released;
  }
}

/**
 * Own user, PID, IPC and UTS namespaces; the system read-only; a private /tmp, /dev/shm and /proc;
 * the service's data hidden; only the job's own directories visible, writable where the uid owns them.
 */
function bwrapArgs(
  command: string,
  args: string[],
  visibleDirs: string[],
  hiddenPaths: string[],
  limits: ResourceLimits,
  slot: JobSlot | undefined,
  readOnlyDirs: string[],
  options: string[],
): string[] {
  const tmpSize = String(limits.memoryBytes);
  const out = ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', ...options];
  out.push('--die-with-parent', '--new-session', ...SYSTEM_VIEW, '--dev', '/dev', '--proc', '/proc');
  // The cgroup tree would show every other job's group, its limits and its usage.
  out.push('--tmpfs', '/sys/fs/cgroup');
  if (slot) {
    // Inside the slot's tmpfs: /tmp, /dev/shm and the job's directories share one quota.
    out.push('--bind', join(slot.dir, 'tmp'), '/tmp', '--bind', join(slot.dir, 'shm'), '/dev/shm');
  } else {
    for (const dir of PRIVATE_DIRS) out.push('--size', tmpSize, '--tmpfs', dir);
  }
  // Before the data dir inside it is hidden again.
  if (REBOUND_INSTALL) out.push('--ro-bind', REBOUND_INSTALL, REBOUND_INSTALL);
  for (const path of hiddenPaths) if (inSystemView(path) && existsSync(path)) out.push('--tmpfs', path);
  for (const dir of visibleDirs) out.push('--bind', dir, dir);
  for (const dir of readOnlyDirs) out.push('--ro-bind', dir, dir);
  out.push('--', command, ...args);
  return [BWRAP, ...out];
}

function lowerOf(base: ResourceLimits, wanted: Partial<ResourceLimits>): ResourceLimits {
  const pick = (key: keyof ResourceLimits) => Math.min(base[key], wanted[key] ?? base[key]);
  return {
    memoryBytes: pick('memoryBytes'),
    processes: pick('processes'),
    cpuSeconds: pick('cpuSeconds'),
    fileBytes: pick('fileBytes'),
    openFiles: pick('openFiles'),
    diskBytes: pick('diskBytes'),
  };
}
