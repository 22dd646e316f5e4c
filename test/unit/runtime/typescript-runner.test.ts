import { afterAll, describe, expect, it } from 'vitest';
import { errorOf, makeRunner, recorder, request, resultOf, runOnce, schemaOf } from './runtime-helpers.js';

const { runner, dispose } = makeRunner();
afterAll(dispose);

describe('TypeScript scripts', () => {
  it('passes args by parameter name in schema order, and JS defaults apply to missing ones', async () => {
    const content = 'export async function main(a: string, b = 2, c?: number) { return { a, b, c: c ?? null }; }';
    const req = request('nativets', content, { schema: schemaOf('a', 'b', 'c'), args: { c: 3, a: 'x', extra: 1 } });
    expect(resultOf((await runOnce(runner, req)).outcome)).toEqual({ a: 'x', b: 2, c: 3 });
  });

  it.each(['bun', 'deno', 'nativets'] as const)('runs %s TypeScript (deno on Deno, the others on Node), sync main included', async (language) => {
    const content = 'export function main(n: number): number { const x: number = n * 2; return x; }';
    const req = request(language, content, { schema: schemaOf('n'), args: { n: 21 } });
    expect((await runOnce(runner, req)).outcome).toEqual({ ok: true, result: 42, streamed: false });
  });

  it('returns null for undefined', async () => {
    const { outcome } = await runOnce(runner, request('nativets', 'export function main() {}'));
    expect(outcome).toEqual({ ok: true, result: null, streamed: false });
  });

  it('reports a thrown error with its class name, message and a stack pointing at the source', async () => {
    const content = 'export function main() {\n  const n: number = 1;\n  throw new TypeError(`bad ${n}`);\n}';
    const error = errorOf((await runOnce(runner, request('nativets', content))).outcome);
    expect(error).toMatchObject({ name: 'TypeError', message: 'bad 1' });
    expect(error.stack).toContain('main.ts:3');
  });

  it('reports compile errors, a missing main and non-JSON results as failures', async () => {
    expect(errorOf((await runOnce(runner, request('nativets', 'export function main( {'))).outcome).name).toBe('SyntaxError');
    expect(errorOf((await runOnce(runner, request('nativets', 'export const x = 1;'))).outcome).name).toBe('TypeError');
    const bigint = errorOf((await runOnce(runner, request('nativets', 'export function main() { return 1n; }'))).outcome);
    expect(bigint.name).toBe('SerializationError');
  });

  it('captures console output in order, stdout and stderr interleaved', async () => {
    const content = 'export function main() { console.log("a"); console.error("b"); console.log("c"); return 1; }';
    const { log } = await runOnce(runner, request('nativets', content));
    expect(log).toBe('a\nb\nc\n');
  });

  it('attributes all trailing output to its own job', async () => {
    const content = 'export function main(tag: string) { for (let i = 0; i < 300; i++) console.log(`${tag}-${i}`); return tag; }';
    const schema = schemaOf('tag');
    const first = await runOnce(runner, request('nativets', content, { schema, args: { tag: 'one' } }));
    const second = await runOnce(runner, request('nativets', content, { schema, args: { tag: 'two' } }));
    expect(first.log.trim().split('\n')).toHaveLength(300);
    expect(first.log).not.toContain('two-');
    expect(second.log.trim().split('\n')).toHaveLength(300);
    expect(second.log).not.toContain('one-');
  });

  it('streams an async generator chunk by chunk before the run finishes', async () => {
    const content = `
      export async function* main(n = 3) {
        for (let i = 0; i < n; i++) {
          yield i === 1 ? { i } : \`chunk\${i};\`;
          await new Promise((r) => setTimeout(r, 400));
        }
      }`;
    const rec = recorder();
    let settled = false;
    const running = runner.run(request('nativets', content, { schema: schemaOf('n') }), rec.hooks, new AbortController().signal);
    void running.then(() => (settled = true));
    await expect.poll(() => rec.chunks.length).toBeGreaterThanOrEqual(2);
    expect(settled).toBe(false);
    const outcome = await running;
    expect(rec.chunks).toEqual(['chunk0;', '{"i":1}', 'chunk2;']);
    expect(outcome).toEqual({ ok: true, result: 'chunk0;{"i":1}chunk2;', streamed: true });
  });

  it('streams a sync generator returned by an async main, but returns arrays as results', async () => {
    const gen = 'function* g() { yield "a"; yield "b"; }\nexport async function main() { return g(); }';
    expect((await runOnce(runner, request('nativets', gen))).outcome).toEqual({ ok: true, result: 'ab', streamed: true });
    const arr = 'export function main() { return ["a", "b"]; }';
    expect((await runOnce(runner, request('nativets', arr))).outcome).toEqual({ ok: true, result: ['a', 'b'], streamed: false });
  });
});
