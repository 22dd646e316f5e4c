import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const DIST = join(import.meta.dirname, '../../../dist');

/** The files of dist/ that `file` loads, itself included, following their static imports. */
function staticFiles(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(join(DIST, file), 'utf8');
  for (const [, target] of text.matchAll(/^import\s+(?:[^;]*?\bfrom\s+)?"\.\/([^"]+)";/gm)) staticFiles(target, seen);
  return seen;
}

/** The packages these files import from node_modules (`import ... from "pkg"`). */
function importedPackages(files: Iterable<string>): Set<string> {
  const packages = new Set<string>();
  for (const file of files) {
    const text = readFileSync(join(DIST, file), 'utf8');
    for (const [, target] of text.matchAll(/^import\s+(?:[^;]*?\bfrom\s+)?"([^./][^"]*)";/gm)) if (!target.startsWith('node:')) packages.add(target);
  }
  return packages;
}

/**
 * The packages whose code esbuild put in these files (it heads each bundled module with its path,
 * relative to the checkout: `../main/node_modules/...` where node_modules is a link elsewhere).
 */
function bundledPackages(files: Iterable<string>): Set<string> {
  const packages = new Set<string>();
  for (const file of files) {
    const text = readFileSync(join(DIST, file), 'utf8');
    for (const [, name] of text.matchAll(/^\/\/ (?:[^\n]*\/)?node_modules\/((?:@[^/\n]+\/)?[^/\n]+)\//gm)) packages.add(name);
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
    const loaded = new Set<string>();
    for (const file of ['svc.js', ...served]) staticFiles(file, loaded);
    // What serving needs is bundled into these files; from node_modules only the native addon is imported.
    expect([...importedPackages(loaded)]).toEqual(['better-sqlite3']);
    const bundled = bundledPackages(loaded);
    expect(bundled).toContain('hono');
    const lazy = ['typescript', 'yaml', 'sanitize-html', 'nodemailer', 'commander', '@lezer/go', '@lezer/python', 'jose', 'marked', 'highlight.js', 're2js', 'busboy', 'ansi_up'];
    for (const name of lazy) expect(bundled, `${name} is bundled into what svc serve loads`).not.toContain(name);
  });
});
