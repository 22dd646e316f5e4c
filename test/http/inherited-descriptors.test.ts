import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * A descriptor the service was started with (a supervisor's pipe, a shell's redirection) that
 * does not close on exec reached every job: Node passes such descriptors to the processes it
 * spawns, and bwrap into the sandbox. A Bash job wrote to it at its number, and so could any job.
 */
let s: TestServer;
const aws = process.env.SVC_TEST_SHELL === 'aws';
const received: Buffer[] = [];
// Node itself marks the first few descriptors close-on-exec at its start; not this one.
const INHERITED_FD = 20;

beforeAll(async () => {
  // The server's fd 20 is one end of a socket pair whose other end this test reads.
  s = await startServer({ stdio: ['ignore', 'pipe', 'pipe', ...Array<'ignore'>(INHERITED_FD - 3).fill('ignore'), 'pipe'] });
  (s.process.stdio as unknown as Readable[])[INHERITED_FD]!.on('data', (chunk: Buffer) => received.push(chunk));
});
afterAll(() => s?.stop());

describe.skipIf(aws)("the service's inherited descriptors", () => {
  it('never reach a job', async () => {
    await createScript(s, 'u/admin/inherited_fd', 'bash', `if { echo pwned >&${INHERITED_FD}; } 2>/dev/null; then echo wrote; else echo closed; fi`);
    const res = await s.fetch(`/api/w/${s.workspace}/jobs/run_wait_result/p/u/admin/inherited_fd`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(await res.json()).toBe('closed');
    await createScript(s, 'u/admin/inherited_fd_py', 'python3', `import os\ndef main():\n    try:\n        os.write(${INHERITED_FD}, b"pwned")\n        return "wrote"\n    except OSError:\n        return "closed"\n`);
    const py = await s.fetch(`/api/w/${s.workspace}/jobs/run_wait_result/p/u/admin/inherited_fd_py`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(await py.json()).toBe('closed');
    expect(Buffer.concat(received).toString()).toBe('');
  });
});
