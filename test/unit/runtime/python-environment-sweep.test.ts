import { spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isRoot } from './runtime-helpers.js';

/**
 * The Python sandbox Lambda's between-jobs sweep (environment_sweep.py), run as a uid of its own
 * (outside the job range) so that "every other process of this uid" means only what the test started.
 */
const UID = 201_778;
const HANDLER_DIR = resolve(import.meta.dirname, '../../../functions/handlers/sandbox-python');

describe.runIf(isRoot)('sweep_environment (Python sandbox Lambda, between two jobs)', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'svc-pysweep-'));
  afterAll(() => {
    spawnSync('pkill', ['-KILL', '-u', String(UID)]);
    rmSync(tmp, { recursive: true, force: true });
  });

  it('kills a setsid child the last job left and empties /tmp', () => {
    writeFileSync(join(tmp, 'left-by-job.txt'), 'secret');
    mkdirSync(join(tmp, 'job-dir'));
    for (const path of [tmp, join(tmp, 'left-by-job.txt'), join(tmp, 'job-dir')]) chownSync(path, UID, UID);
    const script = [
      'import subprocess, sys, time',
      `sys.path.insert(0, ${JSON.stringify(HANDLER_DIR)})`,
      'import environment_sweep',
      `subprocess.Popen(["setsid", "sleep", "303"])`,
      'time.sleep(0.3)',
      `environment_sweep.sweep_environment(tmp=${JSON.stringify(tmp)})`,
      'print("swept")',
    ].join('\n');
    const run = spawnSync('python3', ['-B', '-c', script], { uid: UID, gid: UID, encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('swept');
    expect(spawnSync('ps', ['-u', String(UID), '-o', 'args='], { encoding: 'utf8' }).stdout).not.toContain('sleep 303');
    expect(readdirSync(tmp)).toEqual([]);
  });
});
