import { afterAll, describe, expect, it } from 'vitest';
import { DenoFrameReader, type DenoFrame } from '../../../functions/runtime/deno-frames.js';
import { errorOf, makeRunner, recorder, request, runOnce, schemaOf } from './runtime-helpers.js';

const { runner, dispose } = makeRunner();
afterAll(dispose);

// A live interval keeps Deno's event loop busy, so the job waits instead of Deno ending it.
const WAITER = 'export async function main() { setInterval(() => {}, 1000); console.log("waiting"); await new Promise(() => {}); }';

describe('Deno jobs', () => {
  it('pass arguments by name in schema order and print to the log in order', async () => {
    const content = 'export function main(a: string, b = 2) { console.log("out"); console.error("err"); return { a, b, deno: typeof Deno.version.deno }; }';
    const { outcome, log } = await runOnce(runner, request('deno', content, { schema: schemaOf('a', 'b'), args: { a: 'x' } }));
    expect(outcome).toEqual({ ok: true, result: { a: 'x', b: 2, deno: 'string' }, streamed: false });
    expect(log).toBe('out\nerr\n');
  });

  it('stop at their timeout', async () => {
    const { outcome } = await runOnce(runner, request('deno', WAITER, { timeoutMs: 1500 }));
    expect(errorOf(outcome)).toEqual({ name: 'TimeoutError', message: 'job exceeded its timeout of 1.5s' });
  });

  it('are canceled by an abort', async () => {
    const controller = new AbortController();
    const rec = recorder();
    const running = runner.run(request('deno', WAITER), rec.hooks, controller.signal);
    await expect.poll(() => rec.log, { timeout: 10_000 }).toContain('waiting');
    controller.abort();
    expect(errorOf(await running).name).toBe('Canceled');
  });

  it('may not start processes', async () => {
    const content = 'export async function main() { try { await new Deno.Command("true").output(); return "ran"; } catch (e) { return (e as Error).name; } }';
    const { outcome } = await runOnce(runner, request('deno', content));
    expect(outcome).toMatchObject({ ok: true, result: 'NotCapable' });
  });
});

describe('the Deno frame reader', () => {
  it('separates log text from frames split across chunks, whatever the chunk boundaries', () => {
    const marker = '\u0000m:';
    const stream = `hello\nno newline${'\n'}${marker}{"type":"stream","chunk":"a"}\nmore\n\n${marker}{"type":"done","ok":true,"result":"1","streamed":false}\n`;
    for (const size of [1, 2, 5, 1000]) {
      const logs: string[] = [];
      const frames: DenoFrame[] = [];
      const reader = new DenoFrameReader(marker, (t) => logs.push(t), (f) => frames.push(f));
      const bytes = Buffer.from(stream);
      for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size));
      reader.flush();
      expect(logs.join('')).toBe('hello\nno newlinemore\n');
      expect(frames).toEqual([
        { type: 'stream', chunk: 'a' },
        { type: 'done', ok: true, result: '1', streamed: false },
      ]);
    }
  });
});
