import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Between two jobs in one Lambda execution environment, nothing of the last job is left: Lambda
 * gives no namespaces inside an environment, and tenant isolation keeps an environment to one
 * workspace and run-as user, but within it a job's `setsid` child or file in /tmp must still not
 * meet the next job. Every other process of this uid dies, except the warm processes' groups
 * (they serve the same tenant and hold no job state between jobs), and /tmp is emptied except the
 * runner's own directory. Only for Lambda: elsewhere this uid runs other things too.
 */
export function sweepEnvironment(keep: { processGroups: number[]; dirs: string[] }, tmp = '/tmp'): void {
  const spare = new Set([1, process.pid, process.ppid]);
  const groups = new Set(keep.processGroups);
  const uid = process.getuid?.();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || spare.has(Number(entry))) continue;
    try {
      if (statSync(`/proc/${entry}`).uid !== uid) continue;
      // Field 5 of stat is the process group; the command name before it may hold spaces.
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      if (groups.has(Number(fields[2]))) continue;
      process.kill(Number(entry), 'SIGKILL');
    } catch {
      // gone already
    }
  }
  const kept = new Set(keep.dirs);
  for (const name of readdirSync(tmp)) {
    const path = join(tmp, name);
    if (kept.has(path) || keep.dirs.some((dir) => dir.startsWith(`${path}/`))) continue;
    rmSync(path, { recursive: true, force: true });
  }
}
