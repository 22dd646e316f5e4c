/**
 * What the Confiner (confinement.ts) asks the machine once, at start: whether bubblewrap can make
 * user and PID namespaces for a job uid, and whether a job can have a network namespace of its
 * own. Each answer is undefined when it works, else why not. `probeConfinement` asks both at once
 * and without blocking, so that the local service does the rest of its start meanwhile.
 */
import { execFile, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';

export const BWRAP = '/usr/bin/bwrap';
export const NSENTER = '/usr/bin/nsenter';

export interface ConfinementProbes {
  /** Why user+PID namespaces cannot be used, or undefined when they work. */
  namespaces: string | undefined;
  /** Why job network namespaces cannot be made, or undefined when they can. */
  network: string | undefined;
  /**
   * Why bubblewrap cannot keep a job from making user namespaces of its own (`--disable-userns`,
   * bubblewrap 0.8 and later), or undefined when it can.
   */
  nestedUserns?: string | undefined;
}

interface Probe {
  /** Why the probe cannot even run (a missing program), checked first. */
  missing(): string | undefined;
  command: string;
  args: string[];
  options: SpawnSyncOptions;
  /** What its failure is called when it printed nothing. */
  failed: string;
}

interface ProbeRun {
  status: number | null;
  stderr: string;
  error?: Error;
}

const executable = (path: string, why: string) => () => {
  try {
    accessSync(path, fsConstants.X_OK);
    return undefined;
  } catch {
    return why;
  }
};

function namespacesProbe(uid: number): Probe {
  return {
    missing: executable(BWRAP, `${BWRAP} not installed (Debian package bubblewrap)`),
    command: BWRAP,
    args: ['--unshare-user', '--unshare-pid', '--ro-bind', '/', '/', '--proc', '/proc', '--', '/bin/true'],
    options: { uid, gid: uid, env: {}, timeout: 10_000 },
    failed: 'bwrap',
  };
}

/**
 * A user namespace inside the jail would give the job every capability over namespaces of its own
 * (network, mount), the kernel surface most local privilege escalations start from; no job needs one.
 */
function nestedUsernsProbe(uid: number): Probe {
  const probe = namespacesProbe(uid);
  return { ...probe, args: ['--disable-userns', ...probe.args] };
}

/** util-linux's unshare and iproute2's ip make the namespace; nsenter (util-linux) later enters it. */
const NETWORK_PROBE: Probe = {
  missing: () => undefined,
  command: 'unshare',
  args: ['--net', 'ip', 'link', 'set', 'lo', 'up'],
  options: { env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' }, timeout: 10_000 },
  failed: 'unshare',
};

function verdict(probe: Probe, run: ProbeRun): string | undefined {
  if (run.status !== 0) return (run.stderr || run.error?.message || `${probe.failed} exited with ${run.status}`).trim();
  if (probe === NETWORK_PROBE) return executable(NSENTER, `${NSENTER} not installed (Debian package util-linux)`)();
  return undefined;
}

function runSync(probe: Probe): string | undefined {
  const missing = probe.missing();
  if (missing) return missing;
  const result = spawnSync(probe.command, probe.args, { ...probe.options, encoding: 'utf8' });
  return verdict(probe, { status: result.status, stderr: result.stderr, error: result.error });
}

function runAsync(probe: Probe): Promise<string | undefined> {
  const missing = probe.missing();
  if (missing) return Promise.resolve(missing);
  return new Promise((resolve) => {
    execFile(probe.command, probe.args, { ...probe.options, encoding: 'utf8' }, (error, _stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve(verdict(probe, { status, stderr, error: error ?? undefined }));
    });
  });
}

export function probeNamespaces(uid: number): string | undefined {
  return runSync(namespacesProbe(uid));
}

export function probeNestedUserns(uid: number): string | undefined {
  return runSync(nestedUsernsProbe(uid));
}

export function probeNetworkNamespace(): string | undefined {
  return runSync(NETWORK_PROBE);
}

/** Both probes at once, without blocking; the network one only when it would be used. */
export async function probeConfinement(uid: number, network: boolean): Promise<ConfinementProbes> {
  const [namespaces, networkReason, nestedUserns] = await Promise.all([
    runAsync(namespacesProbe(uid)),
    network ? runAsync(NETWORK_PROBE) : undefined,
    runAsync(nestedUsernsProbe(uid)),
  ]);
  return { namespaces, network: networkReason, nestedUserns };
}
