import { copyFileSync, cpSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** The handler's folder in the checkout: the Python sandbox function's code. */
export const PYTHON_HANDLER_DIR = join(REPO, 'functions/handlers/sandbox-python');

const noBytecode = (source: string) => !/__pycache__|\.pyc$/.test(source);

/**
 * The Python sandbox as deployed: the handler, the local runner's shim beside it (so both shells
 * run Python jobs through the same file), and the `svc` client package the handler hands to each
 * job. The stack bundles the function this way (sandbox.ts); the AWS shell under test lays out its
 * in-process sandbox the same (test/aws/aws-shell-bundle.ts).
 */
export function layOutPythonSandbox(outputDir: string): void {
  cpSync(PYTHON_HANDLER_DIR, outputDir, { recursive: true, filter: noBytecode });
  copyFileSync(join(REPO, 'functions/runtime/shims/python_shim.py'), join(outputDir, 'python_shim.py'));
  cpSync(join(REPO, 'clients/python/svc'), join(outputDir, 'svc'), { recursive: true, filter: noBytecode });
}
