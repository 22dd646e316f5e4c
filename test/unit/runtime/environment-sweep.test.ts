import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isRoot } from './runtime-helpers.js';

/**
 * The between-jobs sweep of a Lambda environment, run as a uid of its own (outside the job range)
 * so that "every other process of this uid" means only what the test started.
 */
const UID = 201_777;
const SWEEP = resolve(import.meta.dirname, '../../../functions/runtime/environment-sweep.ts');

describe.runIf(isRoot)('sweepEnvironment (Lambda, between two jobs)', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'svc-sweep-'));
  afterAll(() => {
    spawnSync('pkill', ['-KILL', '-u', String(UID)]);
    rmSync(tmp, { recursive: true, force: true });
  });

  it('kills a setsid child the last job left, spares the warm process group, and empties /tmp but the runner dir', async () => {
    const work = join(tmp, 'svc-sandbox');
    mkdirSync(work);
    writeFileSync(join(work, 'warm-code.txt'), 'kept');
    writeFileSync(join(tmp, 'left-by-job.txt'), 'secret');
    mkdirSync(join(tmp, 'job-dir'));
    for (const path of [tmp, work, join(tmp, 'left-by-job.txt'), join(tmp, 'job-dir')]) chownSync(path, UID, UID);
    const script = `
      import { spawn } from 'node:child_process';
      import { sweepEnvironment } from ${JSON.stringify(SWEEP)};
      const warm = spawn('sleep', ['301'], { detached: true, stdio: 'ignore' });
      const stray = spawn('setsid', ['sleep', '302'], { detached: true, stdio: 'ignore' });
      await new Promise((r) => setTimeout(r, 300));
      sweepEnvironment({ processGroups: [warm.pid], dirs: [${JSON.stringify(work)}] }, ${JSON.stringify(tmp)});
      console.log(JSON.stringify({ warm: warm.pid }));
      process.exit(0);
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { uid: UID, gid: UID, encoding: 'utf8', cwd: resolve(import.meta.dirname, '../../..'), env: { PATH: process.env.PATH } });
    expect(run.stderr).toBe('');
    const { warm } = JSON.parse(run.stdout) as { warm: number };
    const commands = spawnSync('ps', ['-u', String(UID), '-o', 'args='], { encoding: 'utf8' }).stdout;
    expect(commands).toContain('sleep 301');
    expect(commands).not.toContain('sleep 302');
    expect(readdirSync(tmp)).toEqual(['svc-sandbox']);
    expect(existsSync(join(work, 'warm-code.txt'))).toBe(true);
    process.kill(warm, 'SIGKILL');
  });
});
