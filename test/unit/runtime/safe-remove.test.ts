import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeDir } from '../../../functions/runtime/sandbox-process.js';
import { isRoot, TEST_UIDS } from './runtime-helpers.js';

/**
 * The runner removes job directories as root while a job's process may still run (a thread or a
 * child it left behind, until its process is discarded). The job swaps a directory being emptied
 * for a link to a host directory: root must not remove anything there.
 */
const ATTACK = `
import os, sys
job, victim = sys.argv[1], sys.argv[2]
y = os.path.join(job, "y")
os.mkdir(y)
names = [f"f{i:05d}" for i in range(20000)] + ["secret.key"]
for name in names:
    open(os.path.join(y, name), "w").close()
print("ready", flush=True)
while len(os.listdir(y)) > 19000:
    pass
os.rename(y, os.path.join(job, "y2"))
os.symlink(victim, y)
print("swapped", flush=True)
`;

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!isRoot)('removeDir', () => {
  it('never follows a link a process of the job swaps in while the tree is removed', async () => {
    root = mkdtempSync(join(tmpdir(), 'svc-safe-remove-'));
    chmodSync(root, 0o711);
    const victim = join(root, 'victim');
    mkdirSync(victim, { mode: 0o755 });
    writeFileSync(join(victim, 'secret.key'), 'precious');
    // As the runner lays it out: a root-owned 0711 process dir holding the job's own directory.
    const procDir = join(root, 'proc');
    mkdirSync(procDir, { mode: 0o711 });
    const jobDir = join(procDir, 'job');
    mkdirSync(jobDir);
    const uid = TEST_UIDS.first + TEST_UIDS.count - 1;
    chownSync(jobDir, uid, uid);

    const attacker = spawn('/usr/bin/python3', ['-c', ATTACK, jobDir, victim], { uid, gid: uid, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    attacker.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise((resolveExit) => attacker.once('exit', resolveExit));
    await expect.poll(() => out, { timeout: 30_000 }).toContain('ready');

    await removeDir(jobDir).catch(() => undefined);
    await exited;

    expect(out).toContain('swapped');
    expect(readFileSync(join(victim, 'secret.key'), 'utf8')).toBe('precious');
    // What the job left is gone, the link too; the directory it points to is untouched.
    await removeDir(jobDir);
    expect(existsSync(jobDir)).toBe(false);
  }, 60_000);

  it('removes a link as a link, and a tree of files and directories', async () => {
    root = mkdtempSync(join(tmpdir(), 'svc-safe-remove-'));
    const target = join(root, 'target');
    mkdirSync(target);
    writeFileSync(join(target, 'kept'), 'x');
    const tree = join(root, 'tree');
    mkdirSync(join(tree, 'a', 'b', 'c'), { recursive: true });
    writeFileSync(join(tree, 'a', 'b', 'c', 'f'), 'x');
    writeFileSync(join(tree, 'a', 'g'), 'x');
    symlinkSync(target, join(tree, 'a', 'link'));
    await removeDir(tree);
    expect(existsSync(tree)).toBe(false);
    expect(existsSync(join(target, 'kept'))).toBe(true);
    await removeDir(join(root, 'never-there'));
  });
});
