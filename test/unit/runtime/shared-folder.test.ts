import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHARED_FOLDER_MAX_BYTES, type CodeRunner, type RunOutcome } from '../../../functions/ports.js';
import { isRoot, makeRunner, request } from './runtime-helpers.js';

/**
 * The `./shared` folder of same_worker flows, in the runner: a job starts with the files it is
 * given and hands back what it left there — regular files only, within a size limit, and read with
 * the job's own rights so a link cannot carry out what the job could not read itself.
 */

let runner: CodeRunner;
let dispose: () => Promise<void>;
let privateDir: string;
let secretFile: string;

beforeAll(() => {
  ({ runner, dispose } = makeRunner());
  // A file only the service may read (as the data directory's keys are).
  privateDir = mkdtempSync(join(tmpdir(), 'svc-private-'));
  chmodSync(privateDir, 0o700);
  secretFile = join(privateDir, 'signing.key');
  writeFileSync(secretFile, 'top secret', { mode: 0o600 });
});
afterAll(async () => {
  await dispose();
  rmSync(privateDir, { recursive: true, force: true });
});

const run = (language: 'bun' | 'python3' | 'bash', content: string, shared: Record<string, string>): Promise<RunOutcome> =>
  // A generous timeout: on a loaded 2-core machine a cold Python start may take seconds, and these tests are about files.
  runner.run(request(language, content, { shared, timeoutMs: 60_000 }), { onLog: () => {}, onStream: () => {} }, new AbortController().signal);

const b64 = (text: string) => Buffer.from(text).toString('base64');
const text = (outcome: RunOutcome, path: string) => Buffer.from(outcome.shared?.[path] ?? '', 'base64').toString('utf8');

describe('the shared folder of a same_worker flow step', () => {
  it('gives each language the files it is handed, and hands back what the job left', async () => {
    const ts = await run('bun', 'import { readFileSync, writeFileSync } from "node:fs";\nexport function main() { writeFileSync("shared/ts.txt", readFileSync("shared/in/start.txt", "utf8") + " ts"); return "ok"; }', { 'in/start.txt': b64('start') });
    expect(ts).toMatchObject({ ok: true, result: 'ok' });
    expect(text(ts, 'ts.txt')).toBe('start ts');
    expect(text(ts, 'in/start.txt')).toBe('start');

    const py = await run('python3', 'def main():\n    with open("shared/ts.txt") as f:\n        data = f.read()\n    with open("shared/py.txt", "w") as f:\n        f.write(data + " py")\n    return "ok"\n', ts.shared!);
    expect(py).toMatchObject({ ok: true, result: 'ok' });
    expect(text(py, 'py.txt')).toBe('start ts py');

    const sh = await run('bash', 'cat shared/py.txt > shared/sh.txt\nprintf " sh" >> shared/sh.txt\necho ok', py.shared!);
    expect(Object.keys(sh.shared!).sort()).toEqual(['in/start.txt', 'py.txt', 'sh.txt', 'ts.txt']);
    expect(text(sh, 'sh.txt')).toBe('start ts py sh');
  });

  it('keeps a failed job\'s files too (a step that continues on error may leave them for the next)', async () => {
    const failed = await run('python3', 'def main():\n    open("shared/partial.txt", "w").write("half")\n    raise ValueError("boom")\n', {});
    expect(failed).toMatchObject({ ok: false, error: { name: 'ValueError' } });
    expect(text(failed, 'partial.txt')).toBe('half');
  });

  it.skipIf(!isRoot)('carries no links: one towards a file only the service may read brings nothing back', async () => {
    const outcome = await run('bash', `ln -s ${secretFile} shared/key\nln -s ${privateDir} shared/dir\nprintf plain > shared/plain.txt\necho ok`, {});
    expect(outcome).toMatchObject({ ok: true });
    expect(Object.keys(outcome.shared!)).toEqual(['plain.txt']);
    expect(JSON.stringify(outcome)).not.toContain(b64('top secret'));
  });

  it('fails a job that leaves more in the folder than a sandbox invocation can carry', async () => {
    const outcome = await run('bash', `head -c ${SHARED_FOLDER_MAX_BYTES + 1} /dev/zero > shared/big.bin\necho ok`, {});
    expect(outcome).toMatchObject({ ok: false, error: { name: 'SharedFolderError', message: expect.stringContaining(`${SHARED_FOLDER_MAX_BYTES} bytes`) } });
  });

  it('never hands back more than the limit, even from a file that changes while it is read', async () => {
    // The job leaves a file that keeps turning, by atomic renames, from one byte into one past
    // the limit and back. The size used to be taken from lstat and the content from a later
    // readFile: the read saw one byte, carried the large one, and the next step got it whole.
    const big = 2 * SHARED_FOLDER_MAX_BYTES;
    const swapper = (attempt: number) => `import { linkSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
export function main() {
  mkdirSync('hold');
  writeFileSync('hold/small', 'x');
  writeFileSync('hold/big', Buffer.alloc(${big}, ${attempt}));
  writeFileSync('shared/f', 'x');
  let n = 0;
  const swap = () => {
    try {
      for (let i = 0; i < 50; i++, n++) {
        linkSync(n % 2 ? 'hold/big' : 'hold/small', 'hold/next');
        renameSync('hold/next', 'shared/f');
      }
    } catch {
      return; // the job's directory is gone
    }
    setImmediate(swap);
  };
  setImmediate(swap);
  return 'swapping';
}
`;
    for (let attempt = 1; attempt <= 12; attempt++) {
      const outcome = await run('bun', swapper(attempt), {});
      if (outcome.ok) expect(Buffer.from(outcome.shared?.f ?? '', 'base64').length).toBeLessThanOrEqual(SHARED_FOLDER_MAX_BYTES);
      else expect(outcome.error.name).toBe('SharedFolderError');
    }
  });

  it('refuses to write a handed file outside the folder', async () => {
    const escape = join(tmpdir(), `svc-escape-${Date.now()}`);
    const outcome = await run('bash', 'echo ok', { [`../../../../../..${escape}`]: b64('out') });
    expect(outcome).toMatchObject({ ok: false, error: { message: expect.stringMatching(/could not be written: refusing shared folder path "\.\.\/\.\./) } });
    expect(existsSync(escape)).toBe(false);
  });
});
