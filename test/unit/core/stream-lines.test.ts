import { describe, expect, it } from 'vitest';
import { StreamLines, resultWithStream } from '../../../functions/core/runs/stream-lines.js';

/** Output cut into chunks at every position gives the same logs and stream as in one piece. */
function splitAll(chunks: string[]) {
  const lines = new StreamLines();
  let log = '';
  let stream = '';
  for (const chunk of [...chunks.map((c) => lines.push(c)), lines.flush()]) {
    log += chunk.log;
    stream += chunk.stream;
  }
  return { log, stream, seen: lines.seen };
}

describe("WM_STREAM lines (Windmill's result stream from a script's output)", () => {
  const output = 'start\nWM_STREAM: hello\\nworld\nmid WM_STREAM: not at a line start\nWM_STREAM: \nWM_STREAM: !\nend';

  it('moves whole `WM_STREAM: ` lines to the stream, newlines unescaped, and leaves every other line in the logs', () => {
    expect(splitAll([output])).toEqual({ log: 'start\nmid WM_STREAM: not at a line start\nWM_STREAM: \nend', stream: 'hello\nworld!', seen: true });
  });

  it('gives the same answer however the output is cut into chunks', () => {
    const whole = splitAll([output]);
    for (let i = 0; i <= output.length; i++) {
      for (let j = i; j <= output.length; j += 7) expect(splitAll([output.slice(0, i), output.slice(i, j), output.slice(j)]), `cut at ${i}, ${j}`).toEqual(whole);
    }
  });

  it('passes output that names no stream at once, holding back only what may still become a stream line', () => {
    const lines = new StreamLines();
    expect(lines.push('a log line\nand a part')).toEqual({ log: 'a log line\nand a part', stream: '' });
    expect(lines.push(' WM_STR')).toEqual({ log: ' WM_STR', stream: '' });
    expect(lines.push('\nWM_STR')).toEqual({ log: '\n', stream: '' });
    expect(lines.push('EAM: x')).toEqual({ log: '', stream: '' });
    expect(lines.push('y\nafter')).toEqual({ log: 'after', stream: 'xy' });
    expect(lines.seen).toBe(true);
  });

  it('makes the result the stream when the script returned nothing, else puts the stream beside what it returned', () => {
    expect(resultWithStream('abc', null, false)).toBe('abc');
    expect(resultWithStream('abc', { n: 1 }, true)).toEqual({ n: 1, wm_stream: 'abc' });
    expect(resultWithStream('abc', [1], true)).toEqual({ result: [1], wm_stream: 'abc' });
  });
});
