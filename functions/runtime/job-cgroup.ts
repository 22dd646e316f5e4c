import { randomBytes } from 'node:crypto';
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ResourceLimits } from './job-limits.js';
import { endedServiceFolders } from './run-folder.js';

/**
 * A control group per sandboxed process: the one kernel mechanism that bounds the memory of the
 * whole tree, native allocations and tmpfs pages included (RLIMIT_AS breaks V8's address space
 * reservation and counts per process only). cgroup v1 (memory + pids hierarchies, as on these
 * machines) and v2 are both handled; `CgroupKind` says which one this machine offers, if any.
 */
export type CgroupKind = 'v1' | 'v2';

interface Layout {
  kind: CgroupKind;
  /** Directories new job groups go into: one per hierarchy (v1) or one (v2). */
  memoryParent: string;
  pidsParent: string;
}

export class JobCgroup {
  /** Files read after every job, kept open (cgroup files answer a read at offset 0 afresh). */
  private readonly open = new Map<string, number>();
  /** Their paths, joined once: they are read after every job. */
  private readonly files: ReturnType<typeof cgroupFiles>;

  private constructor(
    private readonly layout: Layout,
    private readonly dirs: string[],
  ) {
    this.files = cgroupFiles(layout, dirs);
  }

  /** Finds a place where this process may create groups with memory and pids limits, or says why not. */
  static probe(): { layout: Layout } | { reason: string } {
    try {
      const lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
      const v1 = (name: string) => lines.map((l) => l.split(':')).find((p) => p[1]?.split(',').includes(name))?.[2];
      const memory = v1('memory');
      const pids = v1('pids');
      if (memory !== undefined && pids !== undefined) {
        const layout: Layout = {
          kind: 'v1',
          memoryParent: join('/sys/fs/cgroup/memory', memory),
          pidsParent: join('/sys/fs/cgroup/pids', pids),
        };
        removeEndedServicesGroups(layout);
        JobCgroup.create(layout, { ...probeLimits }).remove();
        return { layout };
      }
      const unified = lines.find((l) => l.startsWith('0::'))?.slice(3);
      if (unified === undefined) return { reason: 'no memory/pids cgroup for this process' };
      const root = existsSync('/sys/fs/cgroup/unified') ? '/sys/fs/cgroup/unified' : '/sys/fs/cgroup';
      const parent = join(root, unified, 'svc-jobs');
      mkdirSync(parent, { recursive: true });
      // Controllers must be on in the parent's subtree; the kernel refuses when it cannot.
      writeFileSync(join(parent, 'cgroup.subtree_control'), '+memory +pids');
      const layout: Layout = { kind: 'v2', memoryParent: parent, pidsParent: parent };
      removeEndedServicesGroups(layout);
      JobCgroup.create(layout, { ...probeLimits }).remove();
      return { layout };
    } catch (error) {
      return { reason: `cgroups not writable: ${(error as Error).message}` };
    }
  }

  static create(layout: Layout, limits: ResourceLimits, owner?: number): JobCgroup {
    // The service's pid in the name: the next service to start removes the groups of one that was killed.
    const name = `${GROUP_PREFIX}-${process.pid}-${randomBytes(8).toString('hex')}`;
    const memoryDir = join(layout.memoryParent, name);
    const pidsDir = join(layout.pidsParent, name);
    const dirs = layout.kind === 'v1' ? [memoryDir, pidsDir] : [memoryDir];
    for (const dir of dirs) mkdirSync(dir);
    const group = new JobCgroup(layout, dirs);
    try {
      if (layout.kind === 'v1') {
        writeFileSync(join(memoryDir, 'memory.limit_in_bytes'), String(limits.memoryBytes));
        // No swap on top of the limit, where the kernel accounts swap at all.
        tryWrite(join(memoryDir, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
        writeFileSync(join(pidsDir, 'pids.max'), String(limits.processes));
      } else {
        writeFileSync(join(memoryDir, 'memory.max'), String(limits.memoryBytes));
        tryWrite(join(memoryDir, 'memory.swap.max'), '0');
        writeFileSync(join(memoryDir, 'pids.max'), String(limits.processes));
      }
      // The job's launcher (already running as the job's uid) moves itself in before it execs.
      if (owner !== undefined) for (const file of group.procsFiles) chownSync(file, owner, owner);
    } catch (error) {
      group.remove();
      throw error;
    }
    return group;
  }

  /** The files a process writes its pid to in order to join (one per hierarchy). */
  get procsFiles(): readonly string[] {
    return this.files.procs;
  }

  /** Processes (not threads) in the group right now. */
  processCount(): number {
    return this.pids().length;
  }

  /** Memory charged to the group now (what its limit is checked against), in bytes. */
  memoryUsage(): number {
    return Number(this.read(this.files.usage)?.trim()) || 0;
  }

  /** How many times the kernel OOM-killed a member for exceeding the memory limit. */
  oomKills(): number {
    return counter(this.read(this.files.oomKills), 'oom_kill');
  }

  /** How many times usage reached the memory limit (reclaim included, so no proof of an OOM kill alone). */
  memoryLimitHits(): number {
    if (this.layout.kind === 'v2') return counter(this.read(this.files.limitHits), 'max');
    return Number(this.read(this.files.limitHits)?.trim()) || 0;
  }

  /** How many forks the process limit refused. */
  forksRefused(): number {
    return counter(this.read(this.files.pidsEvents), 'max');
  }

  /** Kills every member; the group stays usable for accounting until `remove`. */
  killAll(): void {
    for (const pid of this.pids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /** Kills what is left and deletes the group (the kernel refuses while a member still exists). */
  async removeWhenEmpty(): Promise<void> {
    for (let attempt = 0; attempt < 50; attempt++) {
      this.killAll();
      if (this.processCount() === 0) break;
      await delay(10);
    }
    this.remove();
  }

  remove(): void {
    for (const fd of this.open.values()) closeSync(fd);
    this.open.clear();
    for (const dir of this.dirs) {
      try {
        rmdirSync(dir);
      } catch {
        // still populated or already gone; the kernel frees it with its last member
      }
    }
  }

  private pids(): number[] {
    return (this.read(this.procsFiles[0]!) ?? '').split('\n').filter(Boolean).map(Number);
  }

  /** The file's current text (one pread on a kept descriptor), or null when it cannot be read. */
  private read(path: string): string | null {
    try {
      let fd = this.open.get(path);
      if (fd === undefined) this.open.set(path, (fd = openSync(path, 'r')));
      const size = readSync(fd, readBuffer, 0, readBuffer.length, 0);
      // A list longer than the buffer (a very high process limit) is read whole.
      return size < readBuffer.length ? readBuffer.toString('utf8', 0, size) : readFileSync(path, 'utf8');
    } catch {
      return null;
    }
  }
}

const readBuffer = Buffer.alloc(64 * 1024);

/** Job groups are named `svc-job-<pid of the service>-<random>`. */
const GROUP_PREFIX = 'svc-job';
/** Named by svc before the service's pid was in the name. */
const UNOWNED_GROUP = /^svc-[0-9a-f]{16}$/;
/** An unowned group this old is nobody's: a service moves a process into a group it made at once. */
const UNOWNED_GROUP_AGE_MS = 60 * 60_000;

/**
 * A service removes its job groups as their processes end, and all of them when it stops; one that
 * was killed (kill -9, a crash) cannot, and the kernel keeps an empty group until it is removed.
 * So each service, as it starts, removes the groups of services that have ended (known by the pid
 * in their name, as run folders are: run-folder.ts), and those named before the pid was in the
 * name once they are an hour old. The kernel refuses to remove a group a process is still in, so
 * no group in use goes.
 */
function removeEndedServicesGroups(layout: Layout): void {
  for (const parent of new Set([layout.memoryParent, layout.pidsParent])) {
    for (const dir of [...endedServiceFolders(parent, GROUP_PREFIX), ...oldUnownedGroups(parent)]) {
      try {
        rmdirSync(dir);
      } catch {
        // in use, or gone meanwhile
      }
    }
  }
}

function oldUnownedGroups(parent: string): string[] {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  const before = Date.now() - UNOWNED_GROUP_AGE_MS;
  return names
    .filter((name) => UNOWNED_GROUP.test(name))
    .map((name) => join(parent, name))
    .filter((dir) => {
      try {
        return statSync(dir).mtimeMs < before;
      } catch {
        return false;
      }
    });
}

/** The files of a group's directories (memory first, pids last; one directory under cgroup v2) it reads. */
function cgroupFiles(layout: Layout, dirs: string[]) {
  const memory = dirs[0]!;
  const v1 = layout.kind === 'v1';
  return {
    procs: Object.freeze(dirs.map((dir) => join(dir, 'cgroup.procs'))),
    usage: join(memory, v1 ? 'memory.usage_in_bytes' : 'memory.current'),
    oomKills: join(memory, v1 ? 'memory.oom_control' : 'memory.events'),
    limitHits: join(memory, v1 ? 'memory.failcnt' : 'memory.events'),
    pidsEvents: join(dirs.at(-1)!, 'pids.events'),
  };
}

const probeLimits: ResourceLimits = { memoryBytes: 64 * 1024 * 1024, processes: 8, cpuSeconds: 1, fileBytes: 1, openFiles: 8, diskBytes: 1 };

function counter(text: string | null, name: string): number {
  const line = text?.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

function tryWrite(path: string, value: string): void {
  try {
    writeFileSync(path, value);
  } catch {
    // optional knob missing on this kernel
  }
}
