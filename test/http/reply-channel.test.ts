import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * A warm process answers on a pipe of its own (JSON lines), and user code holds that pipe too. A
 * job that wrote to it without ever ending the line once grew one string in the service until V8
 * refused it (`RangeError: Invalid string length`), and the whole service exited with it: about
 * half a GiB, a second or two of writing, from a Python or a TypeScript job alike. (A Deno job
 * cannot open its process's descriptors again: Deno answers EEXIST.)
 */
let s: TestServer;
const aws = process.env.SVC_TEST_SHELL === 'aws';
const ws = () => `/api/w/${s.workspace}`;
const run = async (path: string, body = '{}') =>
  (await s.fetch(`${ws()}/jobs/run_wait_result/p/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json();

// Writes 1 GiB without a newline to fd 4, else fd 3, whichever it may write to (at most 30 s): the
// reply pipe of a Python shim or, as fd 3, the Node IPC channel svc used for TypeScript.
const PYTHON = `import errno, os, time
def main():
    chunk = b"x" * (1 << 20)
    end = time.time() + 30
    written = 0
    for fd in (4, 3):
        while written < (1 << 30) and time.time() < end:
            try:
                written += os.write(fd, chunk)
            except BlockingIOError:
                time.sleep(0.001)
            except OSError:
                break
    return written
`;

const TYPESCRIPT = `import { writeSync } from 'node:fs';
export function main() {
  const chunk = Buffer.alloc(1 << 20, 120);
  const end = Date.now() + 30_000;
  let written = 0;
  for (const fd of [4, 3]) {
    while (written < 2 ** 30 && Date.now() < end) {
      try {
        written += writeSync(fd, chunk);
      } catch (error: any) {
        if (error.code !== 'EAGAIN') break;
      }
    }
  }
  return written;
}
`;

const GO = `package inner

import (
	"bytes"
	"os"
)

func main() (int, error) {
	replies := os.NewFile(4, "replies")
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	written := 0
	for written < 1<<30 {
		n, err := replies.Write(chunk)
		if err != nil {
			return written, err
		}
		written += n
	}
	return written, nil
}
`;

// Counts its runs in its process; its first run leaves a writer that never stops behind it, on
// stdout (waiting for each write to drain) or on its reply pipe (fd 4, short lines the service
// parses one by one).
const PUMPS = {
  stdout: 'const pump = () => process.stdout.write(line, pump);',
  fd4: 'const pump = () => {\n      try {\n        writeSync(4, line);\n      } catch {}\n      setImmediate(pump);\n    };',
};
const leavesWriter = (target: keyof typeof PUMPS) => `import { writeSync } from 'node:fs';
let runs = 0;
export function main() {
  runs += 1;
  if (runs === 1) {
    const line = '{}\\n'.repeat(16384);
    ${PUMPS[target]}
    setTimeout(pump, 10);
  }
  return runs;
}
`;

beforeAll(async () => {
  s = await startServer({ env: { SVC_JOB_TIMEOUT_SECONDS: '60', SVC_MAX_OUTPUT_BYTES: '100000' } });
});
afterAll(() => s?.stop());

describe("a job writing a line that never ends on its process's reply pipe", () => {
  it.each([
    ['python3', PYTHON],
    ['bun', TYPESCRIPT],
    ...(aws ? [] : [['go', GO]]),
  ])('fails the %s job on the output limit, and the service carries on', async (language, content) => {
    const path = `u/admin/endless_reply_${language}`;
    await createScript(s, path, language, content);
    const res = await run(path);
    expect(res.error?.name).toBe('OutputLimitExceeded');
    await createScript(s, `u/admin/after_${language}`, 'python3', 'def main():\n    return "still here"\n');
    expect(await run(`u/admin/after_${language}`)).toBe('still here');
  });
});

describe('a job that leaves its warm process writing after it returned', () => {
  it.each(['stdout', 'fd4'] as const)('costs that process its place (%s): the next run gets a fresh one', async (target) => {
    // Read and dropped while the process idled, that output kept a core of the service busy for as
    // long as the process was kept (a minute after each run), however little the job itself printed.
    const path = `u/admin/leaves_writer_${target}`;
    await createScript(s, path, 'bun', leavesWriter(target));
    expect(await run(path)).toBe(1);
    // What it writes while idle is bounded like a job's output (6x the limit of 100,000 bytes here).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await run(path)).toBe(1);
  });
});

describe('a job streaming many small chunks within its output limit', () => {
  it('is not failed for the framing of its messages', async () => {
    // 90,000 one-byte chunks: 90 KB against the limit of 100,000 bytes, ~6 MB on the reply pipe.
    await createScript(s, 'u/admin/many_chunks', 'bun', 'export async function* main() { for (let i = 0; i < 90000; i++) yield "x"; }');
    expect(await run('u/admin/many_chunks')).toBe('x'.repeat(90000));
  });
});
