import { describe, expect, it } from 'vitest';
import { userStack } from '../../../functions/core/runs/user-stack.js';

/** What `svc script run`, the console and the job API show of a failed job's stack. */
describe('userStack', () => {
  it('keeps a TypeScript job\'s own frames, relative to the script, without the shim\'s', () => {
    const dir = '/tmp/svc-run-Wwckr3/ts-f811eef08c6668b99fb6b104';
    const stack = [
      'Error: bad thing',
      `    at inner (${dir}/main.ts:1:25)`,
      `    at Module.main (${dir}/main.ts:2:26)`,
      `    at callMain (file://${dir}/node-shim.mjs:50:34)`,
      `    at async serve (file://${dir}/node-shim.mjs:29:15)`,
    ].join('\n');
    expect(userStack(stack)).toBe(['Error: bad thing', '    at inner (main.ts:1:25)', '    at Module.main (main.ts:2:26)'].join('\n'));
  });

  it('keeps a Python traceback\'s own frames and drops the shim\'s with their source lines', () => {
    const dir = '/tmp/svc-run-Wwckr3/py-9ca3bb3ecb1174933c46798c';
    const stack = [
      'Traceback (most recent call last):',
      `  File "${dir}/python_shim.py", line 37, in serve`,
      '    outcome = self.call_main(job)',
      '              ^^^^^^^^^^^^^^^^^^^',
      `  File "${dir}/python_shim.py", line 58, in call_main`,
      '    value = main(**job["kwargs"])',
      '            ^^^^^^^^^^^^^^^^^^^^^',
      `  File "${dir}/main.py", line 5, in main`,
      '    inner()',
      `  File "${dir}/main.py", line 2, in inner`,
      '    raise ValueError("bad py")',
      'ValueError: bad py',
      '',
    ].join('\n');
    expect(userStack(stack)).toBe(
      ['Traceback (most recent call last):', '  File "main.py", line 5, in main', '    inner()', '  File "main.py", line 2, in inner', '    raise ValueError("bad py")', 'ValueError: bad py', ''].join('\n'),
    );
  });

  it('leaves a stack without svc frames as it is, library paths included', () => {
    const stack = 'Error: x\n    at f (/opt/deps/node_modules/lib/index.js:1:1)\n    at g (main.ts:3:3)';
    expect(userStack(stack)).toBe(stack);
  });
});
