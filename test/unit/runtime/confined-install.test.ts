import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Confiner } from '../../../functions/runtime/confinement.js';
import { DEFAULT_LIMITS } from '../../../functions/runtime/job-limits.js';
import { inInstallJail, MAX_CONCURRENT_INSTALLS } from '../../../functions/runtime/dependencies/confined-install.js';
import { TEST_UIDS } from './runtime-helpers.js';

/**
 * An install's directory is on the cache's filesystem, without a tmpfs quota: the installer is
 * stopped once it wrote past SVC_JOB_DISK_MB, while it runs, not only when it ends.
 */
const parent = mkdtempSync(join(tmpdir(), 'svc-install-jail-'));
chmodSync(parent, 0o711); // traversable by the jail's uid, as the cache's tmp is
afterAll(() => rmSync(parent, { recursive: true, force: true }));

describe('an installer past the disk limit', () => {
  it('is stopped while it writes, and its output says why', async () => {
    const confiner = new Confiner({ uidRange: TEST_UIDS, limits: { ...DEFAULT_LIMITS, diskBytes: 16 * 1024 * 1024 } });
    const started = Date.now();
    const result = await inInstallJail({
      confiner,
      parent,
      prefix: 'install',
      files: {},
      // 1 MB a step, for ever (a tarball that never ends, a zip bomb); 60 s unless stopped.
      work: (_dir, run) => run('/bin/sh', ['-c', 'i=0; while :; do head -c 1048576 /dev/zero > "f$i"; i=$((i+1)); sleep 0.02; done'], {}, 60_000),
    });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/disk limit of 16 MB/);
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 60_000);
});

describe('the commands of one install', () => {
  // An npm install with install scripts allowed is two npm ci (npm-installer.ts): together they
  // take no longer than one install may.
  it('share one timeout: a command started once it is spent is stopped at once', async () => {
    const confiner = new Confiner({ uidRange: TEST_UIDS });
    const results = await inInstallJail({
      confiner,
      parent,
      prefix: 'install',
      files: {},
      // The second would end well within a timeout of its own.
      work: async (_dir, run) => [await run('/bin/sh', ['-c', 'sleep 60'], {}, 2_000), await run('/bin/sh', ['-c', 'sleep 1'], {}, 2_000)],
    });
    expect(results.map((r) => r.ok)).toEqual([false, false]);
    for (const result of results) expect(result.output).toContain('the install took longer than 2s');
  }, 60_000);

  it('find the files given anew, and nothing of the old ones or of TMPDIR', async () => {
    const confiner = new Confiner({ uidRange: TEST_UIDS });
    const seen = await inInstallJail({
      confiner,
      parent,
      prefix: 'install',
      files: { config: 'secret=1\n' },
      work: async (_dir, run, replaceFiles) => {
        // The first command leaves its own things beside the config, and in TMPDIR.
        const first = await run('/bin/sh', ['-c', 'echo more >> config; mkdir -p cache/logs; echo log > cache/logs/x; echo > cache/kept; echo tmp > "$TMPDIR/left"'], {}, 30_000);
        await replaceFiles({ config: 'public=1\n', 'cache/logs': null });
        const second = await run('/bin/sh', ['-c', 'cat config; ls -A cache; ls -A "$TMPDIR"; touch "$TMPDIR/mine" && echo writable'], {}, 30_000);
        return { first, second };
      },
    });
    expect(seen.first.ok, seen.first.output).toBe(true);
    expect(seen.second.ok, seen.second.output).toBe(true);
    expect(seen.second.output).toBe('public=1\nkept\nwritable\n');
  }, 60_000);
});

describe('many installs at once', () => {
  // Every create starts an install (and a resolution) of its lock in the background; a member
  // creating versions with many distinct locks started as many npm processes, each with a job's
  // memory limit and a uid of the range jobs need, all at once.
  it(`run at most ${MAX_CONCURRENT_INSTALLS} at a time; the others wait their turn`, async () => {
    const confiner = new Confiner({ uidRange: TEST_UIDS });
    let running = 0;
    let most = 0;
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        inInstallJail({
          confiner,
          parent,
          prefix: 'install',
          files: {},
          work: async (_dir, run) => {
            most = Math.max(most, ++running);
            try {
              return await run('/bin/sh', ['-c', 'sleep 0.3'], {}, 30_000);
            } finally {
              running--;
            }
          },
        }),
      ),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(most).toBeLessThanOrEqual(MAX_CONCURRENT_INSTALLS);
    expect(most).toBeGreaterThan(0);
  }, 60_000);
});
