import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-harness.js';

/**
 * Attack: a hostile server writes to the user's terminal through the CLI. Whatever it sends that
 * the CLI prints (an error message, a job's logs and result stream) could carry escape sequences
 * a terminal obeys: OSC 52 writes the clipboard, OSC 0 sets the title, CSI 2J clears the screen,
 * OSC 8 makes a link, a C1 CSI (U+009B) does what ESC [ does (its parameters stay, as text).
 * None may reach stderr; colour may.
 *
 * The "server" is a stand-in that answers only what these commands ask.
 */

const EVIL = 'A\x1b]52;c;cm0gLXJmIH4K\x07B\x1b]0;pwned\x1b\\C\x1b[2J\x1b[HD\x9b2JE\x1b]8;;http://evil.example\x1b\\F\x1b]8;;\x1b\\G\rH\x1b[31mred\x1b[39m\x1b';
const JOB = '0190f7b4-0000-7000-8000-000000000001';
let server: Server;
let url: string;
let gets = 0;
const dir = mkdtempSync(join(tmpdir(), 'svc-hostile-'));

function answer(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url!.split('?')[0];
  if (path === `/api/w/main/jobs_u/get/${JOB}`) {
    // Running at first, so --follow reads the stream; finished when asked again.
    const running = gets++ % 2 === 0;
    const job = { id: JOB, job_kind: 'script', status: running ? 'running' : 'success', running, success: !running, logs: `one ${EVIL}\ntwo ${EVIL}\n`, result: null, script_path: 'u/x/y', created_by: 'x', args: {} };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(job));
    return;
  }
  if (path === `/api/w/main/jobs_u/getupdate_sse/${JOB}`) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify({ new_result_stream: `stream ${EVIL}\n`, new_logs: `one ${EVIL}\n`, log_offset: 10 })}\n\n`);
    res.end(`data: ${JSON.stringify({ completed: true, status: 'success' })}\n\n`);
    return;
  }
  res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'boom', message: `failed ${EVIL}` } }));
}

beforeAll(async () => {
  server = createServer(answer);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const svc = (args: string[]) => runCli([...args, '--base-url', url, '--workspace-id', 'main', '--token', 't'], { cwd: dir, env: { SVC_CONFIG_DIR: join(dir, 'config') } });

/** Every escape sequence and control character in `text` but colour, tab and newline. */
function commands(text: string): string[] {
  // eslint-disable-next-line no-control-regex -- control characters are what this looks for
  return [...text.replace(/\x1b\[[0-9;]*m/g, '').matchAll(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g)].map((m) => JSON.stringify(m[0]));
}

describe('the CLI facing a hostile server, on the terminal', () => {
  it('prints a server\'s error message without its escape sequences', async () => {
    const r = await svc(['whoami']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('failed ABCD2JEFGH\x1b[31mred\x1b[39m');
    expect(commands(r.stderr)).toEqual([]);
  });

  it('prints a followed job\'s logs and stream without escape sequences, keeping their colour', async () => {
    const r = await svc(['job', 'logs', '--follow', JOB]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('stream ABCD2JEFGH\x1b[31mred\x1b[39m');
    expect(r.stderr).toContain('two ABCD2JEFGH\x1b[31mred\x1b[39m');
    expect(commands(r.stderr)).toEqual([]);
  });
});
