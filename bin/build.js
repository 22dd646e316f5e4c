#!/usr/bin/env node
/**
 * Builds the service users run: bin/svc.ts bundled by esbuild into dist/svc.js (our code and the
 * packages it imports in one ES module plus chunks for what `svc serve` loads lazily; packages
 * loaded on first use and native addons stay in node_modules), and beside it the files the
 * runtime reads next to itself: the language shims and the client libraries. `npm ci` runs this (the `prepare` script); `npm start` and the test tiers
 * run it with `--if-stale`, which skips a build made from the inputs as they are now (a fingerprint
 * kept in dist/), so dist/ never lags the sources and an unchanged checkout starts at once. esbuild is a runtime dependency, so this works after `npm ci --omit=dev`.
 */
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
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
  // Windmill's TypeScript client, for code that imports it without a lock naming it (functions/runtime/client-libraries.ts).
  ['node_modules/windmill-client', 'clients/ts/windmill-client'],
  ['clients/python/svc', 'clients/python/svc'],
  ['clients/go', 'clients/go'],
];

/** What a build reads: the sources esbuild bundles, the assets copied beside them, the packages. */
const INPUTS = ['bin', 'functions', 'clients', 'statemachines', 'package.json', 'package-lock.json'];
/** Written last into dist/: the fingerprint of the inputs the build was made from. */
const STAMP = '.inputs-fingerprint';

/**
 * A fingerprint of the inputs by path, size and modification time (not content: hashing every file
 * would cost what it saves). A checkout, an edit or `npm ci` changes it; reading it takes ~10 ms.
 */
export function inputsFingerprint() {
  const hash = createHash('sha256');
  const visit = (path) => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const name of readdirSync(path).sort()) if (name !== '__pycache__' && name !== 'node_modules') visit(join(path, name));
    } else {
      hash.update(`${relative(ROOT, path)}\0${stat.size}\0${stat.mtimeMs}\n`);
    }
  };
  for (const input of INPUTS) visit(join(ROOT, input));
  return hash.digest('hex');
}

/** Whether dist/ was built from the inputs as they are now. */
export function buildIsCurrent() {
  try {
    return readFileSync(join(DIST, STAMP), 'utf8') === inputsFingerprint();
  } catch {
    return false;
  }
}

/** Builds unless dist/ is current (`npm start`, the test tiers' setup); answers whether it built. */
export async function buildServiceIfStale() {
  if (buildIsCurrent()) return false;
  await buildService();
  return true;
}

/** Packages with a compiled addon or binary beside their code: never bundled. */
const NATIVE_PACKAGES = ['better-sqlite3', 'esbuild', '@deno/*', 'deno'];

/**
 * A package our sources `require` (on first use) or `import()` stays a runtime load from
 * node_modules; bundled, its code would be parsed at every start though few requests need it.
 * Packages' own imports of packages are bundled with them.
 */
const packagesOnFirstUseStayExternal = {
  name: 'packages-on-first-use-stay-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      const ours = !args.importer.includes('/node_modules/');
      const onFirstUse = args.kind === 'require-call' || args.kind === 'dynamic-import';
      return ours && onFirstUse && !args.path.startsWith('node:') ? { path: args.path, external: true } : undefined;
    });
  },
};

/**
 * How the service is bundled (into dist/ here; the AWS shell under test bundles itself the same way,
 * test/aws/aws-shell-bundle.ts), with `entryPoints` and `outdir` added.
 */
export const SERVICE_BUNDLE = {
  absWorkingDir: ROOT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // What the service imports is bundled: one file to read and compile instead of hundreds found
  // through node_modules, which was most of what starting took. What it loads on first use
  // (on-first-use.ts) and native addons stay in node_modules, read only when needed.
  plugins: [packagesOnFirstUseStayExternal],
  external: NATIVE_PACKAGES,
  sourcemap: true,
  // Node reads each file's map as it loads it: without the sources' text (they are in the
  // checkout) the maps are a third of the size, and the service starts sooner.
  sourcesContent: false,
  // A `require` in every file, as the Lambda bundles have (lib/constructs/lambda-defaults.ts): a
  // CommonJS package loaded on first use rather than at start (the TypeScript compiler,
  // functions/core/common/typescript-compiler.ts) is required from node_modules.
  banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
  logLevel: 'warning',
};

/** Copies the ASSETS beside a bundle in `outdir`, without Python bytecode. */
export function copyRuntimeAssets(outdir) {
  for (const [from, to] of ASSETS) {
    mkdirSync(dirname(join(outdir, to)), { recursive: true });
    cpSync(join(ROOT, from), join(outdir, to), {
      recursive: true,
      filter: (source) => !source.includes('__pycache__') && !source.endsWith('.pyc'),
    });
  }
}

export async function buildService() {
  const fingerprint = inputsFingerprint();
  // Built aside, then swapped in: a service already running from dist/ (it reads its shims at
  // each job start) finds a whole build at every moment, never a half-written one.
  const next = `${DIST}.next-${process.pid}`;
  const previous = `${DIST}.previous-${process.pid}`;
  rmSync(next, { recursive: true, force: true });
  await build({ ...SERVICE_BUNDLE, entryPoints: { svc: 'bin/svc.ts' }, outdir: next });
  await buildConsoleAssets(join(next, 'console-assets'));
  copyRuntimeAssets(next);
  // Taken before the build: an edit made while it ran leaves the stamp stale, so the next start builds again.
  writeFileSync(join(next, STAMP), fingerprint);
  if (existsSync(DIST)) renameSync(DIST, previous);
  renameSync(next, DIST);
  rmSync(previous, { recursive: true, force: true });
}

/**
 * The console's browser code that needs packages or types (the script editor: CodeMirror and the
 * diff of two versions; the flow editor: CodeMirror, the yaml package and the flow graph with
 * dagre; the runs, item and run pages, typed by the API's views), bundled for the browser, one file each, which the service serves itself under a URL
 * versioned by its content (functions/http/console/static-assets.ts); the API Lambda carries the
 * same file (lib/constructs/api.ts).
 */
export async function buildConsoleAssets(outdir) {
  await build({
    absWorkingDir: ROOT,
    entryPoints: {
      'script-editor': 'functions/http/console/browser/script-editor.ts',
      'flow-editor': 'functions/http/console/browser/flow-editor.ts',
      'runs-page': 'functions/http/console/browser/runs-page.ts',
      'item-page': 'functions/http/console/browser/item-page.ts',
      'run-page': 'functions/http/console/browser/run-page.ts',
      'script-editor-page': 'functions/http/console/browser/script-editor-page.ts',
      'flow-editor-page': 'functions/http/console/browser/flow-editor-page.ts',
      'approvals-inbox': 'functions/http/console/browser/approvals-inbox.ts',
      'approval-page': 'functions/http/console/browser/approval-page.ts',
      'token-page': 'functions/http/console/browser/token-page.ts',
      'settings-page': 'functions/http/console/browser/settings-page.ts',
      'holdings-page': 'functions/http/console/browser/holdings-page.ts',
      'login-page': 'functions/http/console/browser/login-page.ts',
      'openapi-page': 'functions/http/console/browser/openapi-page.ts',
    },
    outdir,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'eof',
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // `--console-assets <dir>`: only the console's browser bundle, for the API Lambda's bundle.
  const assetsAt = process.argv.indexOf('--console-assets');
  if (assetsAt > 0) await buildConsoleAssets(process.argv[assetsAt + 1]);
  else if (process.argv.includes('--if-stale')) await buildServiceIfStale();
  else await buildService();
}
