import { readdirSync, readFileSync } from 'node:fs';

/**
 * Resident memory of a process and its descendants, in bytes, from /proc (Linux); 0 where /proc
 * cannot tell. The warm pool's measure where a process has no cgroup of its own: a confined
 * interpreter sits under a launcher and bwrap, so the tree is summed, not the pid alone.
 */
export function treeRssBytes(pid: number): number {
  let total = 0;
  const seen = new Set<number>();
  const pending = [pid];
  while (pending.length > 0) {
    const current = pending.pop()!;
    if (seen.has(current)) continue;
    seen.add(current);
    total += rssBytes(current);
    pending.push(...childrenOf(current));
  }
  return total;
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
