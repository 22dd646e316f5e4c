import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statfsSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endedServiceFolders } from './run-folder.js';
import { removeTree } from './safe-remove.js';

const SEED = fileURLToPath(new URL('./shims/netns-seed.mjs', import.meta.url));

/** Where a job reaches the service's API, and its egress proxy, inside its own network namespace. */
export const NAMESPACE_API_PORT = 80;
export const NAMESPACE_PROXY_PORT = 3128;

/** A tool path for the helpers, whatever PATH the service was started with. */
const TOOL_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Where the slot sets of every service on this machine live: one place, outside any service's own
 * work directory (removed whole when it stops), so that a start can sweep what dead ones left.
 */
export const SLOT_HOME = join(tmpdir(), 'svc-job-slots');

/**
 * How long an unmounted slot's mount points stay before they are removed. A sandbox starting
 * copies the whole mount tree, then remounts its copy of each mount read-only; removing a mount
 * point detaches its mount in every namespace, the copies too, and a sandbox between the copy and
 * that remount failed to start ("Unable to apply mount flags: remount ...: No such file or
 * directory"). Unmounting alone reaches no copy (the mounts are private). A start takes
 * milliseconds; this is far beyond it.
 */
const REMOVAL_GRACE_MS = 30_000;

/**
 * What one confined process gets besides its uid and cgroup: a network namespace of its own and a
 * size-limited tmpfs for everything it writes (its directories, /tmp, /dev/shm).
 *
 * Why this plumbing (README "Job confinement", "Network boundary"): the namespace has no interface
 * but loopback, so nothing leaves it except through its two loopback listeners, and those belong to
 * the service: a seed process opens them inside the new namespace and hands them over the IPC
 * channel (`netns-seed.mjs`), then exits. The service then answers the API port by forwarding to
 * BASE_INTERNAL_URL and the proxy port with its egress proxy (egress-proxy.ts), which applies the
 * address rules. No process lives per namespace (pasta or slirp4netns would be one each, running
 * beside every warm process), no rule inside the namespace can be changed by the job (it has no
 * capability over a namespace owned by the host's user namespace), and no packet filter package is
 * needed. A slot is made by `unshare` + `ip` + `mount` + the seed (a Node start, ~50-300 ms of CPU
 * on a loaded machine), so slots are made off the run path and reused: a process takes one when it
 * starts (a spare when it is spawned, a one-shot job when it starts) and gives it back when it is
 * gone, its files wiped. A namespace keeps nothing of a process that has ended (its sockets close
 * with it, and it could change no setting of the namespace), so a later process may take it.
 */
export interface JobSlot {
  /** The tmpfs every file the process writes lives in; root-owned, 0711. */
  readonly dir: string;
  /** The bind-mounted network namespace (`nsenter --net=` this). */
  readonly netns: string;
  readonly sizeBytes: number;
  /** True when the tmpfs is (nearly) full: a job that failed then ran out of its disk quota. */
  isFull(): boolean;
  /** What the files in the tmpfs take now, in bytes. */
  usedBytes(): number;
}

interface Slot extends JobSlot {
  readonly root: string;
  servers: Server[];
  idleTimer?: NodeJS.Timeout;
}

export interface JobSlotHandlers {
  /** A connection to the API port inside some job's namespace. */
  api(socket: Socket): void;
  /** A connection to the proxy port. */
  proxy(socket: Socket): void;
}

export class JobSlots {
  private readonly root: string;
  private readonly free = new Map<number, Slot[]>();
  private readonly all = new Set<Slot>();
  private readonly making = new Map<number, number>();
  /** Slots whose seed still runs: `close` waits for them, or it would remove a directory about to be mounted. */
  private readonly seeding = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    private readonly handlers: JobSlotHandlers,
    /** Free slots kept ready per size; more are made in the background when one is taken. */
    private readonly spares = 2,
    private readonly idleMs = 60_000,
    home = SLOT_HOME,
  ) {
    ensureHome(home);
    sweepLeftovers(home);
    this.root = mkdtempSync(join(home, `slots-${process.pid}-`));
    // Job uids walk through to their own slot (bwrap binds it as them); none may list the others.
    chmodSync(this.root, 0o711);
    openSlotSets.add(this);
  }

  /** A free slot of this size, or one made now; either way the free ones are topped up after. */
  async take(sizeBytes: number): Promise<JobSlot> {
    const slot = this.free.get(sizeBytes)?.pop() ?? (await this.make(sizeBytes));
    clearTimeout(slot.idleTimer);
    setImmediate(() => this.topUp(sizeBytes));
    return slot;
  }

  /** Back once its process is gone: wiped, then free for the next one. */
  async give(given: JobSlot): Promise<void> {
    const slot = given as Slot;
    try {
      // Not fs.rm, which follows a link swapped in mid-walk (safe-remove.ts).
      await Promise.all(readdirSync(slot.dir).map((name) => removeTree(join(slot.dir, name))));
    } catch {
      await this.destroy(slot);
      return;
    }
    if (this.closed) return this.destroy(slot);
    const queue = this.free.get(slot.sizeBytes) ?? [];
    this.free.set(slot.sizeBytes, queue);
    queue.push(slot);
    slot.idleTimer = setTimeout(() => {
      // Only those beyond the spares go when idle: they were made for a burst.
      if (queue.length <= this.spares) return;
      queue.splice(queue.indexOf(slot), 1);
      void this.destroy(slot);
    }, this.idleMs);
    slot.idleTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    openSlotSets.delete(this);
    await Promise.allSettled([...this.seeding]);
    await Promise.all([...this.all].map((slot) => this.destroy(slot)));
    removeLater(this.root);
  }

  /**
   * At process exit, whether or not `close` ran or finished: nothing stays mounted after us. The
   * directories stay (see REMOVAL_GRACE_MS): the next start on this machine sweeps them.
   */
  unmountNow(): void {
    const paths = [...this.all].flatMap((slot) => [slot.dir, slot.netns]);
    if (paths.length > 0) spawnSync('umount', ['-l', ...paths], { env: { PATH: TOOL_PATH }, stdio: 'ignore' });
  }

  private topUp(sizeBytes: number): void {
    const ready = (this.free.get(sizeBytes)?.length ?? 0) + (this.making.get(sizeBytes) ?? 0);
    for (let i = ready; i < this.spares && !this.closed; i++) {
      this.making.set(sizeBytes, (this.making.get(sizeBytes) ?? 0) + 1);
      void this.make(sizeBytes)
        .then((slot) => this.give(slot))
        .catch(() => undefined)
        .finally(() => this.making.set(sizeBytes, (this.making.get(sizeBytes) ?? 1) - 1));
    }
  }

  private async make(sizeBytes: number): Promise<Slot> {
    const root = mkdtempSync(join(this.root, 'slot-'));
    chmodSync(root, 0o711);
    const dir = join(root, 'fs');
    const netns = join(root, 'net');
    mkdirSync(dir, { mode: 0o711 });
    writeFileSync(netns, '', { mode: 0o600 });
    const slot: Slot = { root, dir, netns, sizeBytes, servers: [], isFull: () => isFull(dir), usedBytes: () => usedBytes(dir) };
    this.all.add(slot);
    const seeded = seed(netns, dir, sizeBytes);
    this.seeding.add(seeded);
    try {
      slot.servers = await seeded;
    } catch (error) {
      await this.destroy(slot);
      throw error;
    } finally {
      this.seeding.delete(seeded);
    }
    if (this.closed) {
      await this.destroy(slot);
      throw new Error('the job slots are closed');
    }
    const [api, proxy] = slot.servers;
    // One job's connections through each listener, so that no job can take the service's
    // connections (SVC_MAX_CONNECTIONS) or descriptors from the others: every API connection a
    // job opens is one the service accepts, on loopback, where no per-client bound applies.
    api!.maxConnections = JOB_MAX_CONNECTIONS;
    proxy!.maxConnections = JOB_MAX_CONNECTIONS;
    api!.on('connection', (socket: Socket) => this.handlers.api(socket));
    proxy!.on('connection', (socket: Socket) => this.handlers.proxy(socket));
    return slot;
  }

  private async destroy(slot: Slot): Promise<void> {
    if (!this.all.delete(slot)) return;
    clearTimeout(slot.idleTimer);
    for (const server of slot.servers) server.close();
    await unmount([slot.dir, slot.netns]);
    removeLater(slot.root);
  }
}

/** Connections one job's process may hold open at once to the API, and as many out through the egress proxy. */
export const JOB_MAX_CONNECTIONS = 64;

/** Removed once no sandbox can be starting with a copy of its (now unmounted) mounts. */
function removeLater(path: string): void {
  setTimeout(() => void rm(path, { recursive: true, force: true }).catch(() => undefined), REMOVAL_GRACE_MS).unref();
}

/** The home is shared by every service here and sits in /tmp: it must be ours, and not a link. */
function ensureHome(home: string): void {
  mkdirSync(home, { recursive: true, mode: 0o711 });
  const stats = lstatSync(home);
  if (!stats.isDirectory() || stats.uid !== process.getuid?.()) throw new Error(`${home} is not a directory of this user: job slots cannot be made there`);
  // Job uids walk through to their own slot; none may list the others.
  chmodSync(home, 0o711);
}

/** The slot sets not closed yet; one exit hook for all of them (a test process opens many). */
const openSlotSets = new Set<JobSlots>();
process.once('exit', () => {
  for (const slots of openSlotSets) slots.unmountNow();
});

/**
 * Makes the namespace (bind-mounted at `netns`, so it outlives the seed), brings its loopback up,
 * mounts the tmpfs and lets the seed open the listeners; resolves with them.
 */
function seed(netns: string, dir: string, sizeBytes: number): Promise<Server[]> {
  // Both mounts private: a job's sandbox copies every mount under / as a slave of the host's when
  // it starts, then remounts each read-only; a shared slot unmounted meanwhile (this service's or
  // another's on the machine) vanished from that walk and failed the job's start ("Unable to
  // apply mount flags"). Private, its unmount reaches no other namespace.
  const script = 'ip link set lo up && mount --make-private "$3" && mount -t tmpfs -o "size=$1,mode=0711,nosuid,nodev" svc-job "$2" && mount --make-private "$2" && shift 3 && exec "$@"';
  const child = spawn('unshare', [`--net=${netns}`, '/bin/sh', '-c', script, 'svc-slot', String(sizeBytes), dir, netns, process.execPath, SEED, String(NAMESPACE_API_PORT), String(NAMESPACE_PROXY_PORT)], {
    env: { PATH: TOOL_PATH },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  const servers = new Map<number, Server>();
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  child.on('message', (message: { port?: unknown }, handle: unknown) => {
    if (typeof message?.port === 'number' && handle) servers.set(message.port, handle as Server);
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    // 'close', not 'exit': the listeners arrive as IPC messages, which may still be on their way
    // when the seed has exited (seen under load, while a bulk cancel frees many workers at once).
    child.once('close', (code) => {
      const api = servers.get(NAMESPACE_API_PORT);
      const proxy = servers.get(NAMESPACE_PROXY_PORT);
      if (code === 0 && api && proxy) return resolve([api, proxy]);
      for (const server of servers.values()) server.close();
      reject(new Error(`could not make a job network namespace (exit ${code}): ${stderr.trim()}`));
    });
  });
}

function unmount(paths: string[]): Promise<void> {
  return new Promise((resolve) => {
    // -l: a mount still held by a dying process goes as soon as it is let go.
    const child = spawn('umount', ['-l', ...paths], { env: { PATH: TOOL_PATH }, stdio: 'ignore' });
    child.once('error', () => resolve());
    child.once('exit', () => resolve());
  });
}

/** Less than a page left: the writer got ENOSPC. */
function isFull(dir: string): boolean {
  try {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize < 4096 * 2;
  } catch {
    return false;
  }
}

function usedBytes(dir: string): number {
  try {
    const stats = statfsSync(dir);
    return (stats.blocks - stats.bfree) * stats.bsize;
  } catch {
    return 0;
  }
}

/**
 * Slots of a service that died (kill -9) stay mounted: their mounts are let go at the next start
 * on this machine, and their directories removed after the grace, unless their process lives.
 */
const sweeping = new Set<string>();
function sweepLeftovers(home: string): void {
  const roots = endedServiceFolders(home, 'slots').filter((root) => !sweeping.has(root));
  if (roots.length === 0) return;
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => roots.some((root) => point.startsWith(root + '/')));
  if (mounts.length > 0) spawnSync('umount', ['-l', ...mounts], { env: { PATH: TOOL_PATH }, stdio: 'ignore' });
  for (const root of roots) {
    sweeping.add(root);
    removeLater(root);
  }
}
