import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * A failed job's error as its author reads it (job API, console, CLI): their own frames, relative
 * to the script; nothing of svc's shims or of where the runtime put the job.
 */

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.stop());

const ws = () => `/api/w/${s.workspace}`;

async function failedError(path: string): Promise<{ name: string; message: string; stack: string }> {
  // A sync webhook answers a failed job's error as its result (spec 4.4).
  const res = await s.post(`${ws()}/jobs/run_wait_result/p/${path}`, {});
  return ((await res.json()) as { error: { name: string; message: string; stack: string } }).error;
}

describe('job errors', () => {
  it('a TypeScript error keeps the script\'s frames, without the shim or the job directory', async () => {
    await createScript(s, 'u/admin/ts_boom', 'bun', 'function inner() {\n  throw new Error("bad thing");\n}\nexport function main() {\n  inner();\n}\n');
    const error = await failedError('u/admin/ts_boom');
    expect(error).toMatchObject({ name: 'Error', message: 'bad thing' });
    expect(error.stack).toMatch(/^Error: bad thing\n {4}at inner \(main\.ts:2:\d+\)\n {4}at (Module\.)?main \(main\.ts:5:\d+\)$/);
  });

  it('a Python traceback keeps the script\'s frames, without the shim or the job directory', async () => {
    await createScript(s, 'u/admin/py_boom', 'python3', 'def inner():\n    raise ValueError("bad py")\n\ndef main():\n    inner()\n');
    const error = await failedError('u/admin/py_boom');
    expect(error).toMatchObject({ name: 'ValueError', message: 'bad py' });
    expect(error.stack).toContain('  File "main.py", line 5, in main\n');
    expect(error.stack).toContain('  File "main.py", line 2, in inner\n');
    expect(error.stack).not.toMatch(/python_shim|svc-run-|\/tmp\//);
  });
});
