import { describe, expect, it } from 'vitest';
import { terminalGuard, terminalSafe, type Io } from '../../../functions/cli/io.js';

/** What the CLI prints of a server's text reaches a terminal without the sequences it would obey (test/cli/hostile-terminal.test.ts runs it end to end). */

describe('terminalSafe', () => {
  it.each([
    ['a\x1b]52;c;ZXZpbA==\x07b', 'ab'],
    ['a\x1b]0;title\x1b\\b', 'ab'],
    ['x\x1b[2Jy\x1b[Hz\x1b[6n', 'xyz'],
    ['\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\', 'link'],
    ['dcs\x1bPq#0\x1b\\after', 'dcsafter'],
    ['reset\x1bc!', 'reset!'],
    ['c1\x9b2J\x9d0;t\x9c', 'c12J0;t'],
    ['back\x08\x08space\x7f', 'backspace'],
    ['over\rwritten', 'overwritten'],
    // Cut off at the end of a piece of a stream: the next piece cannot complete it.
    ['cut\x1b', 'cut'],
    ['cut\x1b[3', 'cut'],
    ['cut\x1b]0;ti', 'cut'],
  ])('drops the escape sequences and controls of %j', (text, safe) => {
    expect(terminalSafe(text)).toBe(safe);
  });

  it('keeps colour, tabs, line ends and every other character', () => {
    const text = '\x1b[1;31mred\x1b[0m\tcol\r\nnext\nété ✓ 日本';
    expect(terminalSafe(text)).toBe(text);
  });
});

describe('terminalGuard', () => {
  const recorder = () => {
    const seen: Record<'out' | 'err' | 'stream' | 'ask', string[]> = { out: [], err: [], stream: [], ask: [] };
    const io: Io = {
      out: (t) => seen.out.push(t),
      err: (t) => seen.err.push(t),
      stream: (t) => seen.stream.push(t),
      ask: async (q) => (seen.ask.push(q), null),
      env: {},
      cwd: '.',
    };
    return { io, seen };
  };

  it('guards stderr, the stream and questions always, stdout on a terminal only', async () => {
    for (const terminal of [true, false]) {
      const { io, seen } = recorder();
      const guarded = terminalGuard(io, terminal);
      guarded.out('o\x1b]0;t\x07');
      guarded.err('e\x1b]0;t\x07');
      guarded.stream('s\x1b]0;t\x07');
      await guarded.ask('q\x1b]0;t\x07? ');
      expect(seen).toEqual({ out: [terminal ? 'o' : 'o\x1b]0;t\x07'], err: ['e'], stream: ['s'], ask: ['q? '] });
    }
  });
});
