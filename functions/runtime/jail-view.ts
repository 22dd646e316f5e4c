import { existsSync, lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What a jail shows of the host's file system: the system read-only, entry by entry, the
 * directories it makes private, and the service's own installation where that would vanish.
 * Worked out once per process (functions/runtime/confinement.ts builds the bwrap arguments).
 */

/** The directories a jail replaces with an empty tmpfs of its own. */
export const PRIVATE_DIRS = ['/tmp', '/dev/shm'];

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
export const REBOUND_INSTALL = PRIVATE_DIRS.some((dir) => isInside(INSTALL_ROOT, dir)) && traversableByAll(INSTALL_ROOT) ? INSTALL_ROOT : null;

/** Top-level entries a jail makes afresh (`--proc`, `--dev`, a private /tmp) rather than showing the host's. */
const REPLACED_TOP_LEVEL = new Set(['/proc', '/dev', '/tmp']);

/**
 * The jail's view of the system: each top-level entry of the host's `/` bound read-only on its own
 * (a symbolic link made again), except those the jail replaces. Not `--ro-bind / /`: a bind is
 * recursive, so every mount of the host came along, and a job's /proc/self/mountinfo listed them,
 * even those its private /tmp covered: every job slot of every service on the machine (under
 * /tmp/svc-job-slots), the tmpfs hiding the data dir at the data dir's path. Worked out once:
 * the warm path does not start processes.
 */
export const SYSTEM_VIEW = systemViewArgs();

function systemViewArgs(): string[] {
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync('/');
  } catch {
    return ['--ro-bind', '/', '/'];
  }
  for (const name of names.sort()) {
    const path = `/${name}`;
    if (REPLACED_TOP_LEVEL.has(path)) continue;
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) out.push('--symlink', readlinkSync(path), path);
      else if (stat.isDirectory() || stat.isFile()) out.push('--ro-bind', path, path);
    } catch {
      // Gone since it was listed: nothing to show.
    }
  }
  return out;
}

/**
 * Whether a path the jail hides is in the jail's view at all. One under a replaced directory (the
 * data dir under /tmp, say) is not, and hiding it would only show its path: bwrap makes a mount
 * point for it in the private /tmp, and the mount is listed in the job's mountinfo.
 */
export function inSystemView(path: string): boolean {
  if (REBOUND_INSTALL && (isInside(path, REBOUND_INSTALL) || isInside(REBOUND_INSTALL, path))) return true;
  return ![...REPLACED_TOP_LEVEL].some((dir) => isInside(path, dir));
}
