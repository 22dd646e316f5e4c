import { afterAll, describe, expect, it } from 'vitest';
import type { CodeRunner, RunRequest } from '../../../functions/ports.js';
import { makeRunner, processKey, request, resultOf, runOnce } from './runtime-helpers.js';

/**
 * Windmill's client libraries keep the first job's WM_TOKEN (windmill-client when it is imported,
 * wmill in its global client), and a job token dies with its job: a script using them gets a fresh
 * process for each job, while other scripts keep theirs warm (docs/windmill.md).
 */

// Stands in for `import * as wmill from 'windmill-client'`, which needs the package installed.
const TS_CLIENT = "const client = 'windmill-client';\nexport function main() { return [process.pid, process.getuid(), client]; }";
const TS_PLAIN = 'export function main() { return [process.pid, process.getuid()]; }';
// Stands in for `import wmill`: the shim sees the module loaded.
const PY_CLIENT = 'import os, sys, types\ndef main():\n    sys.modules.setdefault("wmill", types.ModuleType("wmill"))\n    return [os.getpid(), os.getuid()]\n';
const PY_PLAIN = 'import os\ndef main():\n    return [os.getpid(), os.getuid()]\n';

async function pidOf(runner: CodeRunner, req: RunRequest): Promise<number> {
  return processKey(resultOf((await runOnce(runner, req)).outcome) as [number, number]);
}

// windmill-client bundled into a codebase script: its code reads WM_TOKEN by name.
const TS_BUNDLED = 'const token = () => process.env["WM_TOKEN"];\nexport function main() { return [process.pid, process.getuid(), typeof token]; }';

describe.each([
  ['nativets', TS_CLIENT, TS_PLAIN],
  ['nativets', TS_BUNDLED, TS_PLAIN],
  ['python3', PY_CLIENT, PY_PLAIN],
] as const)('%s scripts using a Windmill client', (language, client, plain) => {
  const { runner, dispose } = makeRunner({ maxWarmPerKey: 1 });
  afterAll(dispose);

  it('run each job in a fresh process', async () => {
    const req = () => request(language, client, { scriptHash: 'client' });
    const first = await pidOf(runner, req());
    expect(await pidOf(runner, req())).not.toBe(first);
  });

  it('while other scripts keep their warm process', async () => {
    const req = () => request(language, plain, { scriptHash: 'plain' });
    const first = await pidOf(runner, req());
    expect(await pidOf(runner, req())).toBe(first);
  });
});
