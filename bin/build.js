#!/usr/bin/env node
/**
 * Builds the service users run: bin/svc.ts bundled by esbuild into dist/svc.js (our code in one
 * ES module plus chunks for what `svc serve` loads lazily; packages stay imports resolved from
 * node_modules), and beside it the files the runtime reads next to itself: the language shims and
 * the client libraries. `npm ci` runs this (the `prepare` script), `npm start` again, so dist/
 * never lags the sources. esbuild is a runtime dependency, so this works after `npm ci --omit=dev`.
 */
import { build } from 'esbuild';
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');

/**
 * Paths the runtime resolves against its own module (new URL('./...', import.meta.url)); in the
 * bundle that module is dist/svc.js or one of its chunks, all in dist/. The Node sandbox Lambda's
 * bundle gets the same layout (lib/constructs/sandbox.ts).
 */
const ASSETS = [
  ['functions/runtime/shims', 'shims'],
  ['clients/ts/svc-client', 'clients/ts/svc-client'],
  ['clients/python/svc', 'clients/python/svc'],
  ['clients/go', 'clients/go'],
];

export async function buildService() {
  // Built aside, then swapped in: a service already running from dist/ (it reads its shims at
  // each job start) finds a whole build at every moment, never a half-written one.
  const next = `${DIST}.next-${process.pid}`;
  const previous = `${DIST}.previous-${process.pid}`;
  rmSync(next, { recursive: true, force: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: { svc: 'bin/svc.ts' },
    outdir: next,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
  });
  for (const [from, to] of ASSETS) {
    mkdirSync(dirname(join(next, to)), { recursive: true });
    cpSync(join(ROOT, from), join(next, to), {
      recursive: true,
      filter: (source) => !source.includes('__pycache__') && !source.endsWith('.pyc'),
    });
  }
  if (existsSync(DIST)) renameSync(DIST, previous);
  renameSync(next, DIST);
  rmSync(previous, { recursive: true, force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildService();
