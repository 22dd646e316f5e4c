import { existsSync } from 'node:fs';
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { RunRequest } from '../../ports.js';
import { goBinaryPath } from '../../runtime/go-build.js';
import { goContentMarker } from '../../runtime/go-source.js';

/**
 * Puts a Go job's binary where the runner looks for it (go-runner.ts): fetched once per container
 * from the presigned URL the worker sent, then kept by the content's hash (a container serves one
 * tenant, so one workspace). null when it is there, else why the job cannot run.
 */
export async function fetchGoBinary(request: RunRequest, cacheDir: string, signal: AbortSignal): Promise<string | null> {
  const binary = goBinaryPath(cacheDir, request.content);
  if (existsSync(binary)) return null;
  if (!request.goBinaryUrl) return 'this Go job came without the URL of its binary';
  let bytes: Buffer;
  try {
    const response = await fetch(request.goBinaryUrl, { signal });
    if (!response.ok) return `the binary of this Go script version could not be fetched (HTTP ${response.status}): create the version again with its binary`;
    bytes = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    return `the binary of this Go script version could not be fetched: ${error instanceof Error ? error.message : String(error)}`;
  }
  // The same check as at upload: never run the binary of another script's content.
  if (!bytes.includes(goContentMarker(request.content))) return "the stored binary was not built from this script's content";
  await mkdir(dirname(binary), { recursive: true, mode: 0o755 });
  const partial = `${binary}.${process.pid}.part`;
  await writeFile(partial, bytes, { mode: 0o755 });
  await chmod(partial, 0o755);
  await rename(partial, binary);
  return null;
}
