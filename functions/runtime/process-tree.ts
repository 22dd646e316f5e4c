import { readdirSync, readFileSync, statSync } from 'node:fs';

/**
 * What the warm pool measures of a process that has no cgroup of its own, or that a cgroup does
 * not tell, from /proc (Linux). A confined interpreter sits under a launcher and bwrap, so the
 * tree is read, not the pid alone; where /proc cannot tell, the measures are 0.
 */

/** Resident memory of a process and its descendants, in bytes. */
export function treeRssBytes(pid: number): number {
  let total = 0;
  for (const member of processTree(pid)) total += rssBytes(member);
  return total;
}

/**
 * The most CPU time (user and system) any one process of the tree has used, in seconds: what
 * RLIMIT_CPU, which counts each process on its own, is checked against.
 */
export function largestCpuSeconds(pid: number): number {
  let largest = 0;
  for (const member of processTree(pid)) largest = Math.max(largest, cpuSeconds(member));
  return largest;
}

/**
 * The process of the tree with the most open files: a warm interpreter, whose files the warm pool
 * watches (RLIMIT_NOFILE counts each process on its own). undefined when /proc cannot tell.
 */
export function processWithMostFiles(pid: number): number | undefined {
  let most: { pid: number; files: number } | undefined;
  for (const member of processTree(pid)) {
    const files = openFileCount(member);
    if (!most || files > most.files) most = { pid: member, files };
  }
  return most?.pid;
}

/** How many files (sockets and pipes included) a process has open; 0 when /proc cannot tell. */
export function openFileCount(pid: number): number {
  const dir = `/proc/${pid}/fd`;
  try {
    // Linux 6.2 and later give the count as the directory's size: one stat instead of a listing.
    return statSync(dir).size || readdirSync(dir).length;
  } catch {
    return 0; // gone, or not Linux
  }
}

/** Linux reports CPU times in clock ticks of USER_HZ, which is 100 on every architecture it exports. */
const TICKS_PER_SECOND = 100;

function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its end.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND || 0; // utime, stime (fields 14, 15)
  } catch {
    return 0; // gone, or not Linux
  }
}

function processTree(pid: number): number[] {
  const seen = new Set<number>();
  const pending = [pid];
  while (pending.length > 0) {
    const current = pending.pop()!;
    if (seen.has(current)) continue;
    seen.add(current);
    pending.push(...childrenOf(current));
  }
  return [...seen];
}

function rssBytes(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) * 1024 : 0;
  } catch {
    return 0; // gone, or not Linux
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}
