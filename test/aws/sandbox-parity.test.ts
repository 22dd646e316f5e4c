import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLambdaSandboxRunner } from '../../functions/adapters/aws/lambda-sandbox-runner.js';
import { inProcessInvoke } from '../../functions/adapters/aws/sandbox-in-process.js';
import { closeSandbox, setSandboxWorkDir } from '../../functions/handlers/sandbox.js';
import type { Language, RunOutcome, RunRequest } from '../../functions/ports.js';
import { makeRunner, recorder, request, schemaOf } from '../unit/runtime/runtime-helpers.js';

// The same scripts through the local runner and through the sandbox handlers (Node in-process,
// Python as the real handler module), compared result for result.

const sandboxDir = mkdtempSync(join(tmpdir(), 'svc-sandbox-test-'));
setSandboxWorkDir(sandboxDir);
const sandbox = createLambdaSandboxRunner(inProcessInvoke());
const { runner: local, dispose } = makeRunner();

afterAll(async () => {
  await Promise.all([dispose(), closeSandbox()]);
  rmSync(sandboxDir, { recursive: true, force: true });
});

/** Tracebacks name each shell's own temp paths; everything else must match. */
function withoutStack(outcome: RunOutcome): RunOutcome {
  if (outcome.ok) return outcome;
  const { stack: _stack, ...error } = outcome.error;
  return { ok: false, error };
}

async function observe(runner: typeof local, req: RunRequest) {
  const rec = recorder();
  const outcome = await runner.run(req, rec.hooks, new AbortController().signal);
  return { outcome: withoutStack(outcome), log: rec.log, chunks: rec.chunks };
}

/** Runs `req` in both shells and returns the sandbox's observation after checking it matches. */
async function expectSameInBoth(req: RunRequest) {
  const [fromLocal, fromSandbox] = await Promise.all([observe(local, req), observe(sandbox, req)]);
  expect(fromSandbox).toEqual(fromLocal);
  return fromSandbox;
}

describe('TypeScript jobs in the Node sandbox match the local runner', () => {
  const greet =
    'export function main(name: string, count = 2, extra?: unknown) {\n' +
    '  console.log(`hello ${name}`);\n  console.error("to stderr");\n  return { name, count, extra: extra ?? null };\n}\n';

  it.each(['nativets', 'bun', 'deno'] satisfies Language[])('%s: args by name, defaults, undeclared args dropped, logs', async (language) => {
    const req = request(language, greet, { schema: schemaOf('name', 'count', 'extra'), args: { name: 'ada', other: 1 } });
    const seen = await expectSameInBoth(req);
    expect(seen.outcome).toEqual({ ok: true, result: { name: 'ada', count: 2, extra: null }, streamed: false });
    expect(seen.log).toBe('hello ada\nto stderr\n');
  });

  it('errors: thrown, syntax, missing main', async () => {
    const thrown = await expectSameInBoth(request('nativets', 'export function main() { throw new RangeError("out of range"); }'));
    expect(thrown.outcome).toEqual({ ok: false, error: { name: 'RangeError', message: 'out of range' } });
    expect((await expectSameInBoth(request('nativets', 'export function main( {'))).outcome).toMatchObject({ ok: false, error: { name: 'SyntaxError' } });
    expect((await expectSameInBoth(request('nativets', 'export const x = 1;'))).outcome).toMatchObject({ ok: false, error: { name: 'TypeError' } });
  });

  it('an async generator streams its chunks in order', async () => {
    const content =
      'export async function* main(n = 4) {\n' +
      '  for (let i = 0; i < n; i++) { yield i === 2 ? { i } : `c${i};`; await new Promise((r) => setTimeout(r, 20)); }\n}\n';
    const seen = await expectSameInBoth(request('nativets', content, { schema: schemaOf('n') }));
    expect(seen.chunks).toEqual(['c0;', 'c1;', '{"i":2}', 'c3;']);
    expect(seen.outcome).toEqual({ ok: true, result: 'c0;c1;{"i":2}c3;', streamed: true });
  });

  it('a timeout stops the job with the same error', async () => {
    const seen = await expectSameInBoth(request('nativets', 'export async function main() { await new Promise(() => {}); }', { timeoutMs: 400 }));
    expect(seen.outcome).toMatchObject({ ok: false, error: { name: 'TimeoutError' } });
  });
});

describe('bash jobs in the Node sandbox match the local runner', () => {
  it('positional args in schema order, last line as JSON', async () => {
    const content = 'echo "log line"\necho "{\\"a\\": \\"$1\\", \\"b\\": \\"$2\\"}"\n';
    const seen = await expectSameInBoth(request('bash', content, { schema: schemaOf('a', 'b'), args: { b: 'two', a: 'one' } }));
    expect(seen.outcome).toEqual({ ok: true, result: { a: 'one', b: 'two' }, streamed: false });
  });

  it('a non-zero exit fails with its code and last output', async () => {
    const seen = await expectSameInBoth(request('bash', 'echo "about to fail" >&2\nexit 3\n'));
    expect(seen.outcome).toMatchObject({ ok: false, error: { name: 'ExecutionErr' } });
  });
});

describe('Python jobs in the Python sandbox match the local runner', () => {
  it('keyword args named in the schema, defaults, None as null, logs in order', async () => {
    const content =
      'import sys\ndef main(a: str, b: int = 2, c=None):\n    print("one")\n    print("two", file=sys.stderr)\n    print("three")\n' +
      '    return {"a": a, "b": b, "c": c}\n';
    const seen = await expectSameInBoth(request('python3', content, { schema: schemaOf('a', 'b', 'c'), args: { a: 'x', extra: 1 } }));
    expect(seen.outcome).toEqual({ ok: true, result: { a: 'x', b: 2, c: null }, streamed: false });
    expect(seen.log).toBe('one\ntwo\nthree\n');
    expect((await expectSameInBoth(request('python3', 'def main():\n    pass\n'))).outcome).toEqual({ ok: true, result: null, streamed: false });
  });

  it('an async main is awaited; lists are results, iterators are streams', async () => {
    await expectSameInBoth(request('python3', 'import asyncio\nasync def main():\n    await asyncio.sleep(0)\n    return [1, 2.5, "x"]\n'));
    const list = await expectSameInBoth(request('python3', 'def main():\n    return ["a", "b"]\n'));
    expect(list.outcome).toEqual({ ok: true, result: ['a', 'b'], streamed: false });
    const iterator = await expectSameInBoth(request('python3', 'def main():\n    return iter(["a", "b"])\n'));
    expect(iterator.outcome).toEqual({ ok: true, result: 'ab', streamed: true });
  });

  it('errors: exception name and message, syntax error, missing main, process exit', async () => {
    const raised = await expectSameInBoth(request('python3', 'def main():\n    raise ValueError("bad value")\n'));
    expect(raised.outcome).toEqual({ ok: false, error: { name: 'ValueError', message: 'bad value' } });
    expect((await expectSameInBoth(request('python3', 'def main(:\n'))).outcome).toMatchObject({ error: { name: 'SyntaxError' } });
    expect((await expectSameInBoth(request('python3', 'x = 1\n'))).outcome).toMatchObject({ error: { name: 'TypeError' } });
    const exited = await expectSameInBoth(request('python3', 'import os\ndef main():\n    print("bye")\n    os._exit(3)\n'));
    expect(exited.outcome).toEqual({ ok: false, error: { name: 'ExecutionErr', message: 'the process exited with code 3 before the job finished:\nbye' } });
  });

  it('a generator streams its chunks in order', async () => {
    const content = 'import time\ndef main(n: int = 3):\n    for i in range(n):\n        yield {"i": i} if i == 1 else f"chunk{i};"\n        time.sleep(0.05)\n';
    const seen = await expectSameInBoth(request('python3', content, { schema: schemaOf('n') }));
    expect(seen.chunks).toEqual(['chunk0;', '{"i": 1}', 'chunk2;']);
    expect(seen.outcome).toEqual({ ok: true, result: 'chunk0;{"i": 1}chunk2;', streamed: true });
  });

  it('the timeout and the output limit stop the job with the same errors', async () => {
    const sleeper = await expectSameInBoth(request('python3', 'import time\ndef main():\n    time.sleep(30)\n', { timeoutMs: 500 }));
    expect(sleeper.outcome).toEqual({ ok: false, error: { name: 'TimeoutError', message: 'job exceeded its timeout of 0.5s' } });
    const chatty = request('python3', 'def main():\n    for _ in range(100):\n        print("x" * 100)\n', { maxOutputBytes: 1000 });
    const fromSandbox = await observe(sandbox, chatty);
    expect(fromSandbox.outcome).toEqual((await observe(local, chatty)).outcome);
    expect(fromSandbox.outcome).toEqual({ ok: false, error: { name: 'OutputLimitExceeded', message: 'job output exceeded the limit of 1000 bytes' } });
  });
});

describe('the svc client libraries import the same in both shells', () => {
  const env = { OV_TOKEN: 'tok', OV_WORKSPACE: 'ws', BASE_INTERNAL_URL: 'http://127.0.0.1:1', OV_JOB_ID: 'job-1', OV_USERNAME: 'alice' };

  it('TypeScript: svc-client getContext()', async () => {
    const content = "import { getContext } from 'svc-client';\nexport function main() { return getContext(); }\n";
    const seen = await expectSameInBoth(request('nativets', content, { env }));
    expect(seen.outcome).toMatchObject({ ok: true, result: { workspace: 'ws', jobId: 'job-1', username: 'alice', flowPath: null } });
  });

  it('Python: svc.get_context()', async () => {
    // Without base_url: the API's address is the job's own, inside the job network boundary its
    // namespace's; the Python sandbox handler runs its jobs beside the boundary (docs: Job confinement).
    const content = 'import svc\ndef main():\n    ctx = svc.get_context()\n    ctx.pop("base_url")\n    return ctx\n';
    const seen = await expectSameInBoth(request('python3', content, { env }));
    expect(seen.outcome).toMatchObject({ ok: true, result: { workspace: 'ws', job_id: 'job-1', username: 'alice', flow_path: null } });
  });
});

describe("a same_worker flow's ./shared folder travels the same in both shells", () => {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const shared = { 'in/start.txt': b64('start') };

  it.each([
    ['python3', 'import os\ndef main():\n    data = open("shared/in/start.txt").read()\n    open("shared/out.txt", "w").write(data + " py")\n    os.symlink("/etc/hostname", "shared/link")\n    return "ok"\n'],
    ['bash', 'printf "%s sh" "$(cat shared/in/start.txt)" > shared/out.txt\nln -s /etc/hostname shared/link\necho ok'],
    ['nativets', 'import { readFileSync, writeFileSync } from "node:fs";\nexport function main() { writeFileSync("shared/out.txt", readFileSync("shared/in/start.txt", "utf8") + " ts"); return "ok" }'],
  ] satisfies [Language, string][])('%s: the files handed in, what the job left, no links', async (language, content) => {
    const seen = await expectSameInBoth(request(language, content, { shared }));
    expect(seen.outcome).toMatchObject({ ok: true, result: 'ok' });
    expect(Object.keys(seen.outcome.shared ?? {}).sort()).toEqual(['in/start.txt', 'out.txt']);
  });

  it('python3: a folder too large to carry fails the job with the same error', async () => {
    const seen = await expectSameInBoth(request('python3', `def main():\n    open("shared/big.bin", "wb").write(b"0" * ${3 * 1024 * 1024 + 1})\n`, { shared: {} }));
    expect(seen.outcome).toEqual({ ok: false, error: { name: 'SharedFolderError', message: `the shared folder holds more than ${3 * 1024 * 1024} bytes` } });
  });
});
