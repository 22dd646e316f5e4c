import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The svc checkout's file `relative` (e.g. `package.json`), found upwards from `from`: this code
 * runs from functions/cli/ in the sources and from dist/ in the build, at different depths.
 */
export function findInPackage(from: string, relative: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, relative))) return join(dir, relative);
    if (dirname(dir) === dir) return null;
  }
}
