import { describe, expect, it } from 'vitest';
import { LiveOutput, LogLines } from '../../../functions/cli/live-output.js';
import type { Io } from '../../../functions/cli/io.js';

describe('LogLines: log text in pieces, printed by whole lines', () => {
  it('prints a line once its newline came, keeps the rest for the next piece or the end', () => {
    const lines = new LogLines();
    expect(lines.add('first li')).toEqual([]);
    expect(lines.add('ne\nsecond line\nthi')).toEqual(['first line', 'second line']);
    expect(lines.printed).toBe('first line\nsecond line\n'.length);
    expect(lines.rest('first line\nsecond line\nthird\n')).toBe('third');
  });

  it('takes the whole text so far (a job as listed) and uses only what is new', () => {
    const lines = new LogLines();
    expect(lines.addFrom('a\nb')).toEqual(['a']);
    expect(lines.addFrom('a\nb')).toEqual([]);
    expect(lines.addFrom('a\nbc\nd\n')).toEqual(['bc', 'd']);
    expect(lines.rest('a\nbc\nd\n')).toBe('');
  });
});

describe('LiveOutput', () => {
  it('starts a line of ours on a fresh line after a streamed chunk that stopped mid-line', () => {
    let text = '';
    const io = { err: (t: string) => (text += t + '\n'), stream: (t: string) => (text += t) } as unknown as Io;
    const out = new LiveOutput(io);
    out.stream('tok1 tok2');
    out.line('[a] log line');
    out.stream('done\n');
    out.line('--- step a');
    expect(text).toBe('tok1 tok2\n[a] log line\ndone\n--- step a\n');
  });
});
