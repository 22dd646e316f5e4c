import { describe, expect, it } from 'vitest';
import { JobOutputRouter, type OutputEnd } from '../../../functions/runtime/job-output.js';

/**
 * A warm process's stdout carries each job's log, ended by a string only that job was given: the
 * trailer, followed by the result message in the same stream, or the marker, with the result on the
 * reply channel. Chunks split anywhere, even inside the end strings or the message.
 */
const ends = { marker: '\u0000svc-end-m\u0000', trailer: '\u0000svc-done-t\u0000' };

function route(chunks: string[]) {
  const router = new JobOutputRouter();
  const log: string[] = [];
  const counted: string[] = [];
  let end: OutputEnd | undefined;
  void router.begin(ends, (text) => log.push(text), (text) => counted.push(text)).then((e) => (end = e));
  for (const chunk of chunks) router.push(Buffer.from(chunk));
  return { router, log: () => log.join(''), counted: () => counted.join(''), end: async () => (await Promise.resolve(), end) };
}

/** Every way of cutting `text` in two. */
function splits(text: string): string[][] {
  return Array.from({ length: text.length + 1 }, (_, i) => [text.slice(0, i), text.slice(i)]);
}

describe('JobOutputRouter', () => {
  it('gives the log before the trailer to the job and the line after it as the result message, however the stream is cut', async () => {
    const stream = `hello\nworld${ends.trailer}{"type":"done","id":"1"}\nafter the job`;
    for (const chunks of [...splits(stream), [...stream]]) {
      const { log, counted, end } = route(chunks);
      expect(log()).toBe('hello\nworld');
      expect(await end()).toEqual({ done: '{"type":"done","id":"1"}' });
      expect(counted()).toBe('{"type":"done","id":"1"}');
    }
  });

  it('ends the log at the marker with no message, the result being on the reply channel', async () => {
    const stream = `log line\n${ends.marker}stray`;
    for (const chunks of splits(stream)) {
      const { log, end } = route(chunks);
      expect(log()).toBe('log line\n');
      expect(await end()).toEqual({});
    }
  });

  it('keeps text that only looks like the start of an end string in the log', async () => {
    const { log, end } = route(['a\u0000svc-d', 'one but not the trailer\n', `${ends.marker}`]);
    expect(log()).toBe('a\u0000svc-done but not the trailer\n');
    expect(await end()).toEqual({});
  });

  it('counts a result message that never ends, so the output limit can stop it', async () => {
    const { counted, end, router } = route([`${ends.trailer}{"type":"done"`]);
    for (let i = 0; i < 10; i++) router.push(Buffer.from('x'.repeat(1000)));
    expect(counted().length).toBe('{"type":"done"'.length + 10_000);
    expect(await end()).toBeUndefined();
  });
});
