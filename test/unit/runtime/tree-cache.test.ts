import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_REMEMBERED_FAILURES, TreeCache } from '../../../functions/runtime/dependencies/tree-cache.js';

/**
 * The installed dependency trees' cache (README: Dependencies, docs/dependencies-aws.md): bounded
 * in size, least recently used first, never a tree a running job holds; two installs of one lock
 * at once leave one tree.
 */
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'svc-tree-cache-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** An install that makes a tree with one file of `bytes` bytes. */
const installer = (cache: TreeCache, bytes: number, counter = { installs: 0 }) => async () => {
  counter.installs++;
  const dir = await mkdtemp(join(await cache.workDir(), 'install-'));
  await mkdir(join(dir, 'pkg'));
  await writeFile(join(dir, 'pkg', 'index.js'), 'x'.repeat(bytes));
  return dir;
};
const trees = () => (existsSync(join(root, 'npm')) ? readdirSync(join(root, 'npm')).sort() : []);

describe('the dependency tree cache', () => {
  it('removes the least recently used trees when over its bound, never a held one', async () => {
    const cache = new TreeCache(root, 2_500);
    await cache.ensure('npm', 'a', installer(cache, 1_000));
    await cache.ensure('npm', 'b', installer(cache, 1_000));
    expect(trees()).toEqual(['a', 'b']);
    // a is used again: b is now the least recently used.
    await cache.ensure('npm', 'a', installer(cache, 1_000));
    await cache.ensure('npm', 'c', installer(cache, 1_000));
    expect(trees()).toEqual(['a', 'c']);

    // A job holds a (from before it looks it up until it ends): it stays, whatever its age.
    const release = cache.hold('a');
    await cache.ensure('npm', 'd', installer(cache, 1_000));
    expect(trees()).toEqual(['a', 'd']);
    release();
    await cache.ensure('npm', 'e', installer(cache, 1_000));
    expect(trees()).toEqual(['d', 'e']);
    // What was removed is installed again when a run asks for it.
    const counter = { installs: 0 };
    expect(await cache.ensure('npm', 'a', installer(cache, 1_000, counter))).toBe(join(root, 'npm', 'a'));
    expect(counter.installs).toBe(1);
    expect(readdirSync(join(root, 'tmp'))).toEqual([]);
  });

  it('remembers a bounded number of failed installs (the oldest forgotten are tried again)', async () => {
    // Each version created with a lock that cannot install (a member's loop of distinct locks)
    // left its error in memory until the service restarted.
    const cache = new TreeCache(root);
    const failing = (counter: { installs: number }) => async (): Promise<string> => {
      counter.installs++;
      throw new Error('x'.repeat(1_000));
    };
    const first = { installs: 0 };
    await expect(cache.ensure('npm', 'k0', failing(first))).rejects.toThrow();
    // Remembered: a run of it answers with the error without installing again.
    await expect(cache.ensure('npm', 'k0', failing(first))).rejects.toThrow();
    expect(first.installs).toBe(1);
    const others = { installs: 0 };
    for (let i = 1; i <= MAX_REMEMBERED_FAILURES; i++) await expect(cache.ensure('npm', `k${i}`, failing(others))).rejects.toThrow();
    await expect(cache.ensure('npm', 'k0', failing(first))).rejects.toThrow();
    expect(first.installs).toBe(2);
  });

  it('removes a tree kept over the bound by a job as soon as the job lets it go', async () => {
    const cache = new TreeCache(root, 1_500);
    await cache.ensure('npm', 'a', installer(cache, 1_000));
    const release = cache.hold('a');
    // b's install (say, prepared at create) ends while a job runs with a: both stay for now.
    await cache.ensure('npm', 'b', installer(cache, 1_000));
    expect(trees()).toEqual(['a', 'b']);
    release();
    await cache.settled();
    expect(trees()).toEqual(['b']);
  });

  it('keeps a tree larger than the bound that was just installed, for the run that asked for it', async () => {
    const cache = new TreeCache(root, 500);
    await cache.ensure('npm', 'a', installer(cache, 100));
    await cache.ensure('npm', 'big', installer(cache, 1_000));
    expect(trees()).toEqual(['big']);
  });

  it('counts the trees an earlier start of the service left', async () => {
    const before = new TreeCache(root, 10_000);
    await before.ensure('npm', 'old', installer(before, 1_000));
    const after = new TreeCache(root, 1_500);
    await after.ensure('npm', 'new', installer(after, 1_000));
    expect(trees()).toEqual(['new']);
  });

  it('leaves one tree when two caches on one root install one lock at once', async () => {
    const one = new TreeCache(root, 10_000);
    const two = new TreeCache(root, 10_000);
    const [a, b] = await Promise.all([one.ensure('npm', 'same', installer(one, 100)), two.ensure('npm', 'same', installer(two, 100))]);
    expect(a).toBe(b);
    expect(trees()).toEqual(['same']);
    expect(readdirSync(join(root, 'tmp'))).toEqual([]);
  });
});
