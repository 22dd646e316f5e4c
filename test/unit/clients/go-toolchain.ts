import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const GO_CLIENT_DIR = fileURLToPath(new URL('../../../clients/go/', import.meta.url));

// GOPROXY=off proves nothing is downloaded; the build cache is Go's usual one, shared with the server's builds.

/** Runs `go` (or `gofmt`) in `cwd` with only what it needs in its environment; never throws. */
export async function goCommand(args: string[], cwd: string, env: Record<string, string> = {}, command: 'go' | 'gofmt' = 'go') {
  try {
    const { stdout, stderr } = await run(command, args, {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), GOPROXY: 'off', GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', ...env },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string; message: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? e.message}` };
  }
}
