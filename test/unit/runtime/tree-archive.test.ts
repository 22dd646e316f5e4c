import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { packTree, unpackTree } from '../../../functions/runtime/dependencies/tree-archive.js';

/**
 * A dependency tree's archive (AWS: built by the builder function, unpacked by the sandbox): what
 * goes in comes out, and an archive that reaches outside its tree is refused.
 */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-tree-archive-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A gzipped tar of raw entries, as a hostile bucket object could be. */
async function archiveOf(entries: { name: string; type: 'file' | 'directory' | 'symlink'; linkname?: string; body?: string }[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => archive.once('end', resolve));
  for (const e of entries) {
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (e.type === 'file') archive.entry({ name: e.name, type: 'file', mode: 0o644 }, e.body ?? '', done);
      else archive.entry({ name: e.name, type: e.type, linkname: e.linkname, mode: 0o755 }, done);
    });
  }
  archive.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

describe('dependency tree archives', () => {
  it('unpack to the tree that was packed: files, modes and relative links', async () => {
    const src = join(dir, 'src');
    mkdirSync(join(src, 'node_modules', 'pkg', 'bin'), { recursive: true });
    mkdirSync(join(src, 'node_modules', '.bin'));
    writeFileSync(join(src, 'node_modules', 'pkg', 'index.js'), 'export const x = 1;\n');
    writeFileSync(join(src, 'node_modules', 'pkg', 'bin', 'cli.js'), '#!/usr/bin/env node\n', { mode: 0o755 });
    symlinkSync('../pkg/bin/cli.js', join(src, 'node_modules', '.bin', 'cli'));
    const out = join(dir, 'out');
    mkdirSync(out);
    await unpackTree(await packTree(src), out);
    expect(readFileSync(join(out, 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe('export const x = 1;\n');
    expect(lstatSync(join(out, 'node_modules', 'pkg', 'bin', 'cli.js')).mode & 0o111).not.toBe(0);
    expect(readlinkSync(join(out, 'node_modules', '.bin', 'cli'))).toBe('../pkg/bin/cli.js');
  });

  it.each([
    ['a name with ..', [{ name: '../escaped.txt', type: 'file' as const, body: 'x' }]],
    ['an absolute name', [{ name: '/tmp/escaped-svc.txt', type: 'file' as const, body: 'x' }]],
    ['a link leaving the tree', [{ name: 'out', type: 'symlink' as const, linkname: '../..' }]],
    ['a write through a link', [{ name: 'inside', type: 'symlink' as const, linkname: '.' }, { name: 'inside/x.txt', type: 'file' as const, body: 'x' }]],
    // x/up is the tree's root; x/c is "up/../.." read by the words, "." (inside), but the kernel
    // follows up first: the root's parent.
    ['a link leaving the tree through another link', [{ name: 'x', type: 'directory' as const }, { name: 'x/up', type: 'symlink' as const, linkname: '..' }, { name: 'x/c', type: 'symlink' as const, linkname: 'up/../..' }]],
    ['a link through a link made after it', [{ name: 'x', type: 'directory' as const }, { name: 'x/c', type: 'symlink' as const, linkname: 'up/../..' }, { name: 'x/up', type: 'symlink' as const, linkname: '..' }]],
  ])('refuse %s', async (_what, entries) => {
    const out = join(dir, 'out');
    mkdirSync(out);
    await expect(unpackTree(await archiveOf(entries), out)).rejects.toThrow(/outside|link/);
    expect(existsSync(join(dir, 'escaped.txt'))).toBe(false);
    expect(existsSync(join(out, 'inside', 'x.txt'))).toBe(false);
  });
});
