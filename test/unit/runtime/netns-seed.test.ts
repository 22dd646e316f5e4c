import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isRoot } from './runtime-helpers.js';

/**
 * The seed that opens a job namespace's two listeners and hands them to the service
 * (functions/runtime/shims/netns-seed.mjs). A service killed while a seed hands them over must not
 * leave the seed behind: it kept the listener it had not handed over and lived on, a few after
 * every test run that killed servers.
 */
const SEED = fileURLToPath(new URL('../../../functions/runtime/shims/netns-seed.mjs', import.meta.url));
const needsRoot = isRoot ? describe : describe.skip;

/**
 * A "service" that starts the seed in its own network namespace, as job-slots.ts does, prints its
 * pid and stops at once: it never acknowledges the first listener, so the seed's second one waits.
 */
const STOPPED_SERVICE = `
const { spawn } = require('node:child_process');
const seed = spawn('unshare', ['--net', process.execPath, ${JSON.stringify(SEED)}, '80', '3128'], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
process.stdout.write(seed.pid + '\\n', () => process.kill(process.pid, 'SIGSTOP'));
`;

/** Running, not gone nor a zombie (its new parent, pid 1 of this machine, may reap it late). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

needsRoot('the namespace seed', () => {
  it('exits when the service is killed while it hands over its listeners', async () => {
    const service = spawn(process.execPath, ['-e', STOPPED_SERVICE], { stdio: ['ignore', 'pipe', 'inherit'] });
    const seedPid = await new Promise<number>((got) => service.stdout.once('data', (text: Buffer) => got(Number(String(text).trim()))));
    try {
      // Let the seed open both listeners and send the first, then kill the service (kill -9).
      await new Promise((r) => setTimeout(r, 1000));
      service.kill('SIGKILL');
      await expect.poll(() => alive(seedPid), { timeout: 10_000 }).toBe(false);
    } finally {
      service.kill('SIGKILL');
      if (alive(seedPid)) process.kill(seedPid, 'SIGKILL');
    }
  }, 30_000);
});
