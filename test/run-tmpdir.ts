import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * vitest globalSetup: every temporary file of a test run goes into one folder of its own, removed
 * when the run ends. The workers and every process they start (servers, CLIs, CDK synths) inherit
 * TMPDIR, so what a test cannot clean up itself goes too: a server killed with -9 leaves its run
 * folder, and each CDK synth writes a cloud assembly (a bundled one is ~110 MB) to a folder of its own.
 */
export default function setup(): (() => void) | undefined {
  // Each project's setup list holds this one too: the first to run makes the folder.
  if (process.env.SVC_TESTS_TMPDIR) return undefined;
  const previous = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), 'svc-tests-'));
  // Jobs run as other users and reach their folders in a server's run folder beneath this one.
  chmodSync(dir, 0o711);
  process.env.TMPDIR = process.env.SVC_TESTS_TMPDIR = dir;
  const remove = () => {
    process.off('exit', remove);
    delete process.env.SVC_TESTS_TMPDIR;
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(dir, { recursive: true, force: true });
  };
  // Also when the process ends before the teardowns reach this one: a run of the aws emulators'
  // files ended without it (its teardown awaits handles the process does not wait for).
  process.once('exit', remove);
  return remove;
}
