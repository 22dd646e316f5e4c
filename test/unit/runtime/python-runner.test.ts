import { afterAll, describe, expect, it } from 'vitest';
import { errorOf, makeRunner, recorder, request, resultOf, runOnce, schemaOf } from './runtime-helpers.js';

const { runner, dispose } = makeRunner();
afterAll(dispose);

describe('Python scripts', () => {
  it('calls main with keyword args named in the schema, defaults applying to missing ones', async () => {
    const content = 'def main(a: str, b: int = 2, c=None):\n    return {"a": a, "b": b, "c": c}\n';
    const req = request('python3', content, { schema: schemaOf('a', 'b', 'c'), args: { a: 'x', extra: 1 } });
    expect(resultOf((await runOnce(runner, req)).outcome)).toEqual({ a: 'x', b: 2, c: null });
  });

  it('returns null for None and awaits an async main', async () => {
    expect((await runOnce(runner, request('python3', 'def main():\n    pass\n'))).outcome).toEqual({ ok: true, result: null, streamed: false });
    const asyncMain = 'import asyncio\nasync def main():\n    await asyncio.sleep(0)\n    return [1, 2]\n';
    expect(resultOf((await runOnce(runner, request('python3', asyncMain))).outcome)).toEqual([1, 2]);
  });

  it('reports an exception with its class name, message and traceback', async () => {
    const content = 'def main():\n    raise ValueError("bad value")\n';
    const error = errorOf((await runOnce(runner, request('python3', content))).outcome);
    expect(error).toMatchObject({ name: 'ValueError', message: 'bad value' });
    expect(error.stack).toContain('Traceback');
  });

  it('reports syntax errors and a missing main as failures', async () => {
    expect(errorOf((await runOnce(runner, request('python3', 'def main(:\n'))).outcome).name).toBe('SyntaxError');
    expect(errorOf((await runOnce(runner, request('python3', 'x = 1\n'))).outcome).name).toBe('TypeError');
  });

  it('captures print and stderr in order', async () => {
    const content = 'import sys\ndef main():\n    print("a")\n    print("b", file=sys.stderr)\n    print("c")\n    return 1\n';
    expect((await runOnce(runner, request('python3', content))).log).toBe('a\nb\nc\n');
  });

  it('attributes all trailing output to its own job', async () => {
    const content = 'def main(tag):\n    for i in range(300):\n        print(f"{tag}-{i}")\n    return tag\n';
    const schema = schemaOf('tag');
    const first = await runOnce(runner, request('python3', content, { schema, args: { tag: 'one' } }));
    const second = await runOnce(runner, request('python3', content, { schema, args: { tag: 'two' } }));
    expect(first.log.trim().split('\n')).toHaveLength(300);
    expect(second.log.trim().split('\n')).toHaveLength(300);
    expect(second.log).not.toContain('one-');
  });

  it('streams a generator chunk by chunk before the run finishes', async () => {
    const content = 'import time\ndef main(n: int = 3):\n    for i in range(n):\n        yield {"i": i} if i == 1 else f"chunk{i};"\n        time.sleep(0.4)\n';
    const rec = recorder();
    let settled = false;
    const running = runner.run(request('python3', content, { schema: schemaOf('n') }), rec.hooks, new AbortController().signal);
    void running.then(() => (settled = true));
    await expect.poll(() => rec.chunks.length).toBeGreaterThanOrEqual(2);
    expect(settled).toBe(false);
    const outcome = await running;
    expect(rec.chunks).toEqual(['chunk0;', '{"i": 1}', 'chunk2;']);
    expect(outcome).toEqual({ ok: true, result: 'chunk0;{"i": 1}chunk2;', streamed: true });
  });

  it('streams any iterator, but returns lists as results', async () => {
    const iterator = 'def main():\n    return iter(["a", "b"])\n';
    expect((await runOnce(runner, request('python3', iterator))).outcome).toEqual({ ok: true, result: 'ab', streamed: true });
    const list = 'def main():\n    return ["a", "b"]\n';
    expect((await runOnce(runner, request('python3', list))).outcome).toEqual({ ok: true, result: ['a', 'b'], streamed: false });
  });
});
