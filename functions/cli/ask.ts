import { createInterface } from 'node:readline';

/**
 * One line from standard input (a TTY prompt, or a piped answer); null at end of input. A `secret`
 * answer typed on a terminal is not shown as it is typed (a token must not stay on the screen).
 */
export function askOnStdin(question: string, err: (t: string) => void, opts: { secret?: boolean } = {}): Promise<string | null> {
  if (opts.secret && process.stdin.isTTY) return askHidden(question, err);
  err(question);
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, terminal: false });
    let answered = false;
    rl.once('line', (line) => {
      answered = true;
      rl.close();
      resolve(line);
    });
    rl.once('close', () => {
      if (!answered) resolve(null);
    });
  });
}

/** The terminal in raw mode, so nothing typed is echoed; Enter ends the answer, Ctrl-C or Ctrl-D gives none. */
function askHidden(question: string, err: (t: string) => void): Promise<string | null> {
  const stdin = process.stdin;
  // Echo off before the prompt shows: what is typed (or pasted) as soon as it appears stays hidden.
  stdin.setRawMode(true);
  err(question);
  return new Promise((resolve) => {
    let answer = '';
    const finish = (value: string | null) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      err('\n');
      resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return finish(answer);
        if (ch === '\u0003' || ch === '\u0004') return finish(null);
        answer = ch === '\u007f' || ch === '\b' ? answer.slice(0, -1) : answer + ch;
      }
    };
    stdin.setEncoding('utf8');
    stdin.on('data', onData);
    stdin.resume();
  });
}
