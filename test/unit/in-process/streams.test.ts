import { beforeAll, describe, expect, it } from 'vitest';
import { readSse } from '../../http/sse-client.js';
import { createScript, inProcessService, until, type InProcessService } from './harness.js';

/**
 * SSE streams (spec 4.5) and the sync endpoints' maximum wait (spec 8) through app.request(): the
 * response body is read as a client reads it. Progress before the end is shown without a clock:
 * the generator waits for the test to have seen its first chunk. test/http/sse*.test.ts keep the
 * real socket (keep-alive comments, a client hanging up, Python generators).
 */

let s: InProcessService;
const ws = '/api/w/main';
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const progress = (events: Array<Record<string, any>>) => events.filter((e) => !e.completed);

/** Resolves the promise a streaming script waits on before its second chunk. */
let releaseSecondChunk: () => void = () => {};
function armGate() {
  (globalThis as Record<string, unknown>).secondChunkGate = new Promise<void>((r) => (releaseSecondChunk = r));
}

beforeAll(async () => {
  s = await inProcessService({ config: { syncMaxWaitMs: 60_000 } });
  await createScript(s, 'f/stream/ts', `export async function* main(n = 3) {
    for (let i = 0; i < n; i++) { yield 'tok' + i + ' '; if (i === 0) await globalThis.secondChunkGate; }
  }`);
  await createScript(s, 'f/stream/plain', 'export function main(x = 1) { return { doubled: x * 2 }; }');
});

describe('SSE streams (spec 4.5)', () => {
  it('stores a stream of many small chunks whole, in a few writes', async () => {
    // One store write per chunk rewrote the whole stream each time (SQLite copies the row): a job
    // yielding a million one-byte chunks grew the local database's WAL by 4.8 GB in a minute.
    await createScript(s, 'f/stream/many', 'export async function* main() { for (let i = 0; i < 10000; i++) yield "x"; }');
    let writes = 0;
    const append = s.store.appendJobStream.bind(s.store);
    s.store.appendJobStream = async (id, chunk) => {
      writes += 1;
      return append(id, chunk);
    };
    try {
      const id = await (await s.fetch(`${ws}/jobs/run/p/f/stream/many`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).text();
      const job = await until(() => s.job(id), (j) => j.completed === true || j.success !== undefined && j.success !== null);
      expect(job.result).toBe('x'.repeat(10000));
      expect((await s.store.getJob('main', id))?.result_stream).toBe('x'.repeat(10000));
    } finally {
      s.store.appendJobStream = append;
    }
    expect(writes).toBeLessThan(100);
  });

  it('streams an async generator chunk by chunk, progress before the end, then completes with the whole stream', async () => {
    armGate();
    const res = await s.fetch(`${ws}/jobs/run_and_stream/p/f/stream/ts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":4}' });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // The job cannot end before the test has seen its first chunk: the stream is not buffered.
    const events = await readSse(res, (e) => {
      if (!e.completed && e.new_result_stream) releaseSecondChunk();
    });
    expect(events.every((e) => e.type === 'update')).toBe(true);
    let text = '';
    for (const u of progress(events)) {
      text += u.new_result_stream;
      expect(u.stream_offset).toBe(text.length);
    }
    const last = events.at(-1);
    expect(last).toMatchObject({ completed: true, only_result: 'tok0 tok1 tok2 tok3 ' });
    expect(text + (last.new_result_stream ?? '')).toBe('tok0 tok1 tok2 tok3 ');
  });

  it('completes a non-streaming job with its result, by hash and a GET payload', async () => {
    const hash = (await (await s.fetch(`${ws}/scripts/get/p/f/stream/plain`)).json()).hash;
    const events = await readSse(await s.fetch(`${ws}/jobs/run_and_stream/h/${hash}?payload=${b64({ x: 21 })}`));
    expect(events).toEqual([expect.objectContaining({ type: 'update', completed: true, only_result: { doubled: 42 } })]);
  });

  it('follows an existing job with getupdate_sse, fast polling or not; 404 for an unknown one', async () => {
    for (const query of ['?fast=true', '']) {
      armGate();
      const id = await (await s.fetch(`${ws}/jobs/run/p/f/stream/ts`, { method: 'POST' })).text();
      const events = await readSse(await s.fetch(`${ws}/job_u/getupdate_sse/${id}${query}`), () => releaseSecondChunk());
      expect(events.at(-1)).toMatchObject({ completed: true, only_result: 'tok0 tok1 tok2 ' });
      expect(progress(events).map((e) => e.new_result_stream).join('') + (events.at(-1).new_result_stream ?? '')).toBe('tok0 tok1 tok2 ');
    }
    expect((await s.fetch(`${ws}/job_u/getupdate_sse/00000000-0000-0000-0000-000000000000`)).status).toBe(404);
  });
});

describe('instance maximum wait of sync endpoints (spec 8)', () => {
  it('gives up waiting with a clear error naming the job, which goes on to finish', async () => {
    armGate();
    const answer = s.fetch(`${ws}/jobs/run_wait_result/p/f/stream/ts`, { method: 'POST' });
    const running = async () => (await s.store.listJobs({ workspace_id: 'main', status: 'running', script_path: 'f/stream/ts', limit: 1 }))[0];
    const job = await until(running, (j) => j !== undefined);
    // The wait is measured on the service's clock: a minute passes, and the waiter is woken to see it.
    s.clock.advance(60_001);
    s.deps.signals.notify(job.id);
    const res = await answer;
    expect(res.status).toBe(504);
    const body = await res.json();
    expect(body.error).toMatchObject({ code: 'sync_wait_timeout', job_id: job.id });
    releaseSecondChunk();
    expect(await s.job(body.error.job_id)).toMatchObject({ status: 'success', result: 'tok0 tok1 tok2 ' });
  });
});
