import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Confiner } from '../../../functions/runtime/confinement.js';
import { DEFAULT_LIMITS } from '../../../functions/runtime/job-limits.js';
import { inInstallJail } from '../../../functions/runtime/dependencies/confined-install.js';
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
