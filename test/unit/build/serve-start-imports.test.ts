import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const DIST = join(import.meta.dirname, '../../../dist');

/** The packages a file of dist/ imports statically, following its static imports of other files of dist/. */
function staticPackages(file: string, seen = new Set<string>()): Set<string> {
  const packages = new Set<string>();
  if (seen.has(file)) return packages;
  seen.add(file);
  const text = readFileSync(join(DIST, file), 'utf8');
  for (const [, target] of text.matchAll(/^import\s+(?:[^;]*?\bfrom\s+)?"([^"]+)";/gm)) {
    if (target.startsWith('./')) for (const p of staticPackages(target.slice(2), seen)) packages.add(p);
    else if (!target.startsWith('node:')) packages.add(target);
  }
  return packages;
}

/**
 * `svc serve` listens within half a second (issue 35) only if it loads no more than serving needs:
 * the large packages that only some requests use are loaded by those requests (on-first-use.ts).
 * The test reads the build (made by the tiers' global setup) rather than timing a start.
 */
describe('what svc serve loads before it listens', () => {
  it('imports neither the TypeScript compiler nor the CLI nor packages only some requests need', () => {
    const entry = readFileSync(join(DIST, 'svc.js'), 'utf8');
    // serve() imports the local shell and its config; nothing else is loaded before it listens.
    const served = [...entry.matchAll(/import\("\.\/((?:local|config)-[A-Z0-9]+\.js)"\)/g)].map((m) => m[1]);
    expect(served).toHaveLength(2);
    const packages = new Set([...staticPackages('svc.js'), ...served.flatMap((file) => [...staticPackages(file)])]);
    expect(packages).toContain('better-sqlite3');
    for (const lazy of ['typescript', 'yaml', 'sanitize-html', 'nodemailer', 'commander', '@lezer/go', '@lezer/python', 'jose']) expect(packages).not.toContain(lazy);
  });
});
