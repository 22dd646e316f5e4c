import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';
import { readSse } from './sse-client.js';

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;

beforeAll(async () => {
  s = await startServer();
  // Chunks 400 ms apart: the stream is stored at most every 100 ms, and on a loaded machine a
  // DynamoDB Local write and the SSE reader's next look at the job took long enough that chunks
  // 150 ms apart arrived as one update (CI, aws shell).
  await createScript(s, 'f/stream/ts', 'bun', `export async function* main(n = 3) {
    for (let i = 0; i < n; i++) { yield 'tok' + i + ' '; await new Promise((r) => setTimeout(r, 400)); }
  }`);
  await createScript(s, 'f/stream/py', 'python3', 'import time\ndef main(words: list = ["a", "b", "c"]):\n    for w in words:\n        yield w + ";"\n        time.sleep(0.15)\n');
  await createScript(s, 'f/stream/plain', 'bun', 'export function main(x = 1) { return { doubled: x * 2 }; }');
});
afterAll(() => s?.stop());

function progress(events: any[]) {
  return events.filter((e) => !e.completed);
}

describe('SSE streams (spec 4.5)', () => {
  it('streams a TypeScript async generator, chunk by chunk, then completes with the whole stream', async () => {
    const res = await s.fetch(`${ws()}/jobs/run_and_stream/p/f/stream/ts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":4}' });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readSse(res);
    expect(events.every((e) => e.type === 'update')).toBe(true);
    const updates = progress(events);
    expect(updates.length).toBeGreaterThanOrEqual(2);
    // Offsets grow with the text streamed so far.
    let text = '';
    for (const u of updates) {
      text += u.new_result_stream;
      expect(u.stream_offset).toBe(text.length);
    }
    const last = events.at(-1);
    expect(last.completed).toBe(true);
    expect(last.only_result).toBe('tok0 tok1 tok2 tok3 ');
    expect(text + (last.new_result_stream ?? '')).toBe('tok0 tok1 tok2 tok3 ');
  });

  // On AWS, Python jobs run in the Python sandbox Lambda, and Lambda's Python runtime cannot stream
  // a response: a Python generator's chunks reach the job together when it ends.
  it.skipIf(process.env.SVC_TEST_SHELL === 'aws')('streams a Python generator over GET with a payload', async () => {
    const payload = Buffer.from(JSON.stringify({ words: ['x', 'y', 'z'] })).toString('base64url');
    const events = await readSse(await s.fetch(`${ws()}/jobs/run_and_stream/p/f/stream/py?payload=${payload}`));
    expect(progress(events).length).toBeGreaterThanOrEqual(2);
    expect(events.at(-1)).toMatchObject({ type: 'update', completed: true, only_result: 'x;y;z;' });
  });

  it('completes a non-streaming job with its result', async () => {
    const hash = (await (await s.fetch(`${ws()}/scripts/get/p/f/stream/plain`)).json()).hash;
    const events = await readSse(await s.fetch(`${ws()}/jobs/run_and_stream/h/${hash}?payload=${Buffer.from('{"x":21}').toString('base64url')}`));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'update', completed: true, only_result: { doubled: 42 } });
  });

  it('follows an existing job with getupdate_sse, fast polling or not', async () => {
    for (const query of ['?fast=true', '']) {
      const id = await (await s.fetch(`${ws()}/jobs/run/p/f/stream/ts`, { method: 'POST' })).text();
      const events = await readSse(await s.fetch(`${ws()}/job_u/getupdate_sse/${id}${query}`));
      expect(events.at(-1)).toMatchObject({ completed: true, only_result: 'tok0 tok1 tok2 ' });
      const all = progress(events).map((e) => e.new_result_stream).join('') + (events.at(-1).new_result_stream ?? '');
      expect(all).toBe('tok0 tok1 tok2 ');
    }
    expect((await s.fetch(`${ws()}/job_u/getupdate_sse/00000000-0000-0000-0000-000000000000`)).status).toBe(404);
  });

  it('delivers progress before the job ends', async () => {
    const started = Date.now();
    const arrivals: number[] = [];
    await readSse(await s.fetch(`${ws()}/jobs/run_and_stream/p/f/stream/ts?payload=${Buffer.from('{"n":5}').toString('base64url')}`), () => arrivals.push(Date.now() - started));
    // The first update arrives well before the last: the stream is not buffered to the end.
    expect(arrivals.at(-1)! - arrivals[0]).toBeGreaterThan(300);
  });
});
