import { chmodSync, mkdirSync, mkdtempSync, rmSync, rmdirSync, statfsSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emptyDirCheck } from '../../../functions/runtime/sandbox-process.js';

/**
 * A warm process's job directory is handed to the next job only when the last one left it empty:
 * on tmpfs (job slots) a stat of the directory decides, elsewhere a listing. Both must see every
 * kind of leftover and give the directory back private.
 */
const TMPFS_MAGIC = 0x01021994;
const roots = [
  { name: 'tmpfs', root: '/dev/shm' },
  { name: 'the temp dir', root: tmpdir() },
].filter(({ root }) => {
  try {
    return root !== '/dev/shm' || statfsSync(root).type === TMPFS_MAGIC;
  } catch {
    return false;
  }
});
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe.each(roots)('emptyDirCheck on $name', ({ root }) => {
  const parent = mkdtempSync(join(root, 'svc-empty-check-'));
  made.push(parent);
  const isEmpty = emptyDirCheck(parent);
  let n = 0;
  const jobDir = () => {
    const dir = join(parent, `job-${n++}`);
    mkdirSync(dir, { mode: 0o700 });
    return dir;
  };

  it('says empty only while nothing is in the directory', () => {
    const dir = jobDir();
    expect(isEmpty(dir)).toBe(true);
    for (const leftover of ['out.txt', '.hidden', 'x'.repeat(200)]) {
      writeFileSync(join(dir, leftover), '');
      expect(isEmpty(dir)).toBe(false);
      unlinkSync(join(dir, leftover));
      expect(isEmpty(dir)).toBe(true);
    }
    mkdirSync(join(dir, 'sub'));
    expect(isEmpty(dir)).toBe(false);
    rmdirSync(join(dir, 'sub'));
    expect(isEmpty(dir)).toBe(true);
  });

  it('makes a directory the job opened up private again', () => {
    const dir = jobDir();
    chmodSync(dir, 0o777);
    expect(isEmpty(dir)).toBe(true);
    expect(statSync(dir).mode & 0o7777).toBe(0o700);
  });

  it('says no for what is not a directory, or is gone', () => {
    const file = join(parent, `file-${n++}`);
    writeFileSync(file, '');
    expect(isEmpty(file)).toBe(false);
    expect(isEmpty(join(parent, 'missing'))).toBe(false);
  });
});
