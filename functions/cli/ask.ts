import { createInterface } from 'node:readline';

/** One line from standard input (a TTY prompt, or a piped answer); null at end of input. */
export function askOnStdin(question: string, err: (t: string) => void): Promise<string | null> {
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
