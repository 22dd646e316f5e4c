import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { removeEndedServiceFolders } from '../../../functions/runtime/run-folder.js';

const parent = mkdtempSync(join(tmpdir(), 'run-folders-'));
afterAll(() => rmSync(parent, { recursive: true, force: true }));

function folder(name: string): string {
  const dir = join(parent, name);
  mkdirSync(join(dir, 'ts-job'), { recursive: true });
  writeFileSync(join(dir, 'ts-job', 'left-behind.txt'), 'a job file');
  return dir;
}

/** A process that has exited but is not collected: sh starts it, then becomes a `sleep`, which collects nothing. */
async function zombie(): Promise<{ pid: number; stop(): void }> {
  const holder = spawn('sh', ['-c', 'true & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const [line] = (await once(holder.stdout!, 'data')) as [Buffer];
  const pid = Number(line.toString().trim());
  await expect.poll(() => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0]).toBe('Z');
  return { pid, stop: () => holder.kill('SIGKILL') };
}

describe('run folders of ended services', () => {
  it("removes the folder of a service that has exited but was not yet collected by its parent", async () => {
    const ended = await zombie();
    try {
      const gone = folder(`svc-run-${ended.pid}-z0mb1e`);
      removeEndedServiceFolders(parent, 'svc-run');
      expect(existsSync(gone)).toBe(false);
    } finally {
      ended.stop();
    }
  });

  it('removes the folders whose service ended, and keeps those of running services', async () => {
    const running = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const ended = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await once(ended, 'exit');
    try {
      const live = folder(`svc-run-${running.pid}-a1b2c3`);
      const gone = folder(`svc-run-${ended.pid}-d4e5f6`);
      const unnamed = folder('svc-run-a1b2c3');
      const other = folder(`svc-deps-${ended.pid}-a1b2c3`);
      // A link named like a run folder is not followed: what it points at stays.
      const target = folder('link-target');
      symlinkSync(target, join(parent, `svc-run-${ended.pid}-link`));

      removeEndedServiceFolders(parent, 'svc-run');

      expect(existsSync(live)).toBe(true);
      expect(existsSync(unnamed)).toBe(true);
      expect(existsSync(other)).toBe(true);
      expect(existsSync(join(target, 'ts-job', 'left-behind.txt'))).toBe(true);
      expect(existsSync(gone)).toBe(false);
    } finally {
      running.kill('SIGKILL');
    }
  });
});
