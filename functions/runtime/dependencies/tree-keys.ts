import { createHash } from 'node:crypto';
import { readNpmLock } from '../../core/dependencies/npm-lock.js';
import { readPythonLock } from '../../core/dependencies/python-imports.js';
import type { Ecosystem } from '../../ports.js';

/**
 * The name of a lock's installed tree: a hash of what the tree is made of (the exact packages,
 * and whether install scripts ran), so two scripts with the same lock share one tree and a
 * different lock never reads another's. null when the lock installs nothing.
 */
export function treeKey(ecosystem: Ecosystem, lock: string, allowInstallScripts = false): string | null {
  if (ecosystem === 'npm') {
    const parsed = readNpmLock(lock);
    if (!parsed || Object.keys(parsed.dependencies).length === 0) return null;
    return hash([parsed.packages, allowInstallScripts]);
  }
  const parsed = readPythonLock(lock);
  if (!parsed) return null;
  return hash(parsed.map((d) => [d.name.toLowerCase(), d.version, d.sha256]).sort());
}

function hash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 32);
}
