import { accessSync, constants as fsConstants } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Where the Deno binary is. `npm ci` installs it: the pinned `deno` package pulls the binary for
 * this platform in through its optional dependency `@deno/<os>-<arch>[-glibc]`. Nothing else is
 * looked for, so a `deno` script runs on that exact Deno or not at all (never on Node).
 */
export function denoBinary(): string | undefined {
  const require = createRequire(import.meta.url);
  for (const name of platformPackages()) {
    try {
      const binary = join(dirname(require.resolve(`${name}/package.json`)), process.platform === 'win32' ? 'deno.exe' : 'deno');
      accessSync(binary, fsConstants.X_OK);
      return binary;
    } catch {
      // not installed for this platform; try the next name
    }
  }
  return undefined;
}

/** Why a `deno` job cannot run here, for the job's error. */
export const DENO_MISSING =
  'Deno is not installed on this runner: deno scripts run only on a real Deno (the npm package `deno`, installed by `npm ci`), never on another runtime';

function platformPackages(): string[] {
  const arch = process.arch === 'x64' ? 'x64' : process.arch;
  if (process.platform === 'linux') return [`@deno/linux-${arch}-glibc`];
  if (process.platform === 'darwin') return [`@deno/darwin-${arch}`];
  if (process.platform === 'win32') return [`@deno/win32-${arch}`];
  return [];
}

/** One line for the start banner: where deno scripts run, or that they cannot. */
export function describeDeno(): string {
  const binary = denoBinary();
  return binary ? `deno scripts run on ${binary}` : `deno scripts CANNOT run: ${DENO_MISSING}`;
}
