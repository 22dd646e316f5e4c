import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLambdaSandboxRunner } from '../../functions/adapters/aws/lambda-sandbox-runner.js';
import { inProcessInvoke } from '../../functions/adapters/aws/sandbox-in-process.js';
import { closeSandbox, setSandboxWorkDir } from '../../functions/handlers/sandbox.js';
import { errorOf, request, resultOf, runOnce } from '../unit/runtime/runtime-helpers.js';

/**
 * The workspace scripts a job imports travel with the sandbox request (RunRequest.modules,
 * docs/workspace-imports.md): both sandboxes write them beside the script, read-only, and refuse
 * a file name that would land outside the job's code folder.
 */
const sandboxDir = mkdtempSync(join(tmpdir(), 'svc-sandbox-modules-'));
setSandboxWorkDir(sandboxDir);
const sandbox = createLambdaSandboxRunner(inProcessInvoke());

afterAll(async () => {
  await closeSandbox();
  rmSync(sandboxDir, { recursive: true, force: true });
});

describe('workspace modules in the sandboxes', () => {
  it('the Python sandbox imports them as f.<folder>.<name>', async () => {
    const req = request('python3', 'from f.common.text import shout\n\ndef main():\n    return shout("a")\n', { modules: { 'f/common/text.py': 'def shout(s):\n    return s.upper() + "!"\n' } });
    expect(resultOf((await runOnce(sandbox, req)).outcome)).toBe('A!');
  });

  it('the Node sandbox transpiles and imports them by relative path', async () => {
    const req = request('bun', 'import { shout } from "./f/common/text.mjs";\nexport function main() { return shout("a"); }\n', {
      modules: { 'f/common/text.mjs': 'export const shout = (s: string): string => s.toUpperCase() + "!";\n' },
    });
    expect(resultOf((await runOnce(sandbox, req)).outcome)).toBe('A!');
  });

  it.each([
    ['python3', '../escape.py'],
    ['python3', 'f/common/../../../escape.py'],
    ['bun', '../escape.mjs'],
    ['bun', '/tmp/escape.mjs'],
  ] as const)('%s: a module named %s is refused', async (language, name) => {
    const req = request(language, language === 'python3' ? 'def main():\n    return 1\n' : 'export function main() { return 1; }\n', { modules: { [name]: 'x = 1\n' } });
    expect(errorOf((await runOnce(sandbox, req)).outcome).message).toMatch(/layout/);
  });
});
