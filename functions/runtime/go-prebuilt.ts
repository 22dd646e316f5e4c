import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { GoTarget } from '../ports.js';
import { buildGoBinary } from './go-build.js';

/** A Go script's binary as a create carries it to a shell that builds nothing (`go_binary`). */
export interface GoBinaryUpload {
  gzip_base64: string;
  sha256: string;
}

/** Thrown with the compiler's own message (main.go:line:col) when the script does not build. */
export class GoBuildError extends Error {}

/**
 * Builds a Go script where a toolchain is (the CLI during `svc sync push`) for the server's
 * sandbox, with the same generated program the server's own builds use (go-source.ts).
 */
export async function prebuiltGoBinary(content: string, target: GoTarget): Promise<GoBinaryUpload> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-go-'));
  try {
    const binary = join(dir, 'out', 'main');
    const failure = await buildGoBinary(content, binary, { workDir: join(dir, 'build'), gopath: join(dir, 'gopath'), target });
    if (failure !== null) throw new GoBuildError(failure);
    const bytes = await readFile(binary);
    return { gzip_base64: gzipSync(bytes, { level: 9 }).toString('base64'), sha256: createHash('sha256').update(bytes).digest('hex') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
