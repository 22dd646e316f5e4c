import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createScript, runSync, startServer } from './harness.js';

/**
 * Each warm process and each job runs in a control group of its own (memory and process limits).
 * A service removes them as their processes end and when it stops; a service that was killed
 * (kill -9, a crash) cannot, and the kernel keeps every empty group until someone removes it: a
 * host whose service crashed now and then gathered them by the hundred. The next service to start
 * removes them.
 */

/** The processes started by `pid`, however deep (the jail's launcher, bubblewrap, the interpreter). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const parent = Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
    } catch {
      // ended meanwhile
    }
  }
  const found: number[] = [];
  for (let next = [pid]; next.length > 0; next = next.flatMap((p) => children.get(p) ?? [])) found.push(...next.filter((p) => p !== pid));
  return found;
}

/** The control group directories the service's job processes are in (not the service's own). */
function jobGroupsOf(servicePid: number): string[] {
  const own = readFileSync(`/proc/${servicePid}/cgroup`, 'utf8');
  const groups = new Set<string>();
  for (const pid of descendants(servicePid)) {
    let lines: string[];
    try {
      lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n');
    } catch {
      continue;
    }
    for (const line of lines) {
      if (own.includes(line)) continue;
      const [, controllers, path] = line.split(':');
      if (controllers === 'memory' || controllers === 'pids') groups.add(join('/sys/fs/cgroup', controllers, path!));
      if (controllers === '') groups.add(join(existsSync('/sys/fs/cgroup/unified') ? '/sys/fs/cgroup/unified' : '/sys/fs/cgroup', path!));
    }
  }
  return [...groups];
}

// The local shell's service runs the jobs; on AWS each runs in a sandbox Lambda, which has no groups to leave.
const local = process.env.SVC_TEST_SHELL !== 'aws';

describe.skipIf(!local)('job control groups of a service that was killed', () => {
  it('are removed by the next service to start', async (ctx) => {
    const first = await startServer();
    let second: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const { confinement } = (await (await first.fetch('/api/runtime')).json()) as { confinement: { memory: string } | null };
      if (!confinement?.memory.startsWith('cgroup')) ctx.skip();
      await createScript(first, 'u/admin/warm', 'bun', 'export function main() { return "warm"; }');
      expect(await runSync(first, 'u/admin/warm')).toEqual({ status: 200, body: 'warm' });
      const groups = jobGroupsOf(first.process.pid!);
      // The warm process that ran the job, and the spares started beside it.
      expect(groups.length).toBeGreaterThan(0);

      await first.kill9();
      expect(groups.filter((dir) => existsSync(dir))).toEqual(groups);

      second = await startServer();
      expect(groups.filter((dir) => existsSync(dir))).toEqual([]);
      // The new service's own jobs are confined as before.
      await createScript(second, 'u/admin/warm', 'bun', 'export function main() { return "warm again"; }');
      expect(await runSync(second, 'u/admin/warm')).toEqual({ status: 200, body: 'warm again' });
      expect(jobGroupsOf(second.process.pid!).length).toBeGreaterThan(0);
    } finally {
      await first.stop();
      await second?.stop();
    }
  }, 60_000);
});
