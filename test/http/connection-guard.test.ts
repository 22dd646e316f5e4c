import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_MAX_CONNECTIONS } from '../../functions/runtime/job-slots.js';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * What one client or job may hold open on the local shell (docs/configuration.md). A request that
 * declared a body and sent none of it held its connection for as long as the client liked: one
 * client opening ~20,000 of them, unauthenticated, left the service no descriptor to accept anyone
 * else's request or start a job. A job's API calls reach the service from loopback, which the
 * per-client bound leaves alone (test/unit/local/connection-guard.test.ts): each job has its own.
 * On AWS, API Gateway reads whole bodies and bounds connections itself.
 */
const aws = process.env.SVC_TEST_SHELL === 'aws';
let s: TestServer;
let port: number;

beforeAll(async () => {
  s = await startServer({ env: { SVC_BODY_IDLE_SECONDS: '1' } });
  port = Number(new URL(s.url).port);
});
afterAll(() => s?.stop());

/** A raw connection, with what the server sent and whether it closed. */
interface Raw {
  socket: Socket;
  received: () => string;
  closed: Promise<number>;
}

function open(): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let text = '';
    const socket = connect(port, '127.0.0.1', () => resolve({ socket, received: () => text, closed }));
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('error', () => undefined);
    const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now() - started)));
    socket.once('error', reject);
  });
}

/** Declares a 1,000-byte login body and sends only its first bytes. */
function stallLogin(raw: Raw): void {
  raw.socket.write(`POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"token":`);
}

describe.skipIf(aws)('connections a client may hold', () => {
  it('a request body that stops arriving is answered 408 and its connection closed', async () => {
    const raw = await open();
    stallLogin(raw);
    const after = await raw.closed;
    expect(raw.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(raw.received()).toContain('"code":"request_timeout"');
    expect(after).toBeLessThan(10_000);
    expect((await s.fetch('/api/version')).status).toBe(200);
  });

  it('a body that keeps arriving, however slowly, is read to its end', async () => {
    const raw = await open();
    const body = JSON.stringify({ token: 'svc_not_a_real_token_at_all' });
    raw.socket.write(`POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: ${s.url}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
    // A byte every 400 ms for ~3 s: each gap is under the idle limit, the whole well over it.
    const chunks = body.match(/.{1,4}/g)!;
    for (const chunk of chunks.slice(0, 8)) {
      raw.socket.write(chunk);
      await new Promise((r) => setTimeout(r, 400));
    }
    raw.socket.write(chunks.slice(8).join(''));
    await raw.closed;
    expect(raw.received()).toMatch(/^HTTP\/1\.1 401 /);
  });

  it("bounds one job's connections to the API, so a job cannot take the service's from the others", async () => {
    await createScript(
      s,
      'u/admin/hoard',
      'python3',
      [
        'import os, socket, urllib.parse',
        'def main():',
        '    api = urllib.parse.urlparse(os.environ["BASE_INTERNAL_URL"])',
        '    held, answered = [], 0',
        '    for _ in range(100):',
        '        c = socket.create_connection((api.hostname, api.port))',
        '        held.append(c)',
        '    for c in held:',
        '        try:',
        '            c.sendall(b"GET /api/version HTTP/1.1\\r\\nHost: svc\\r\\n\\r\\n")',
        '            c.settimeout(5)',
        '            if c.recv(64).startswith(b"HTTP/1.1 200"):',
        '                answered += 1',
        '        except OSError:',
        '            pass',
        '    return answered',
        '',
      ].join('\n'),
    );
    const res = await s.fetch(`/api/w/${s.workspace}/jobs/run_wait_result/p/u/admin/hoard`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(200);
    const answered = (await res.json()) as number;
    expect(answered).toBeGreaterThan(0);
    expect(answered).toBeLessThanOrEqual(JOB_MAX_CONNECTIONS);
    expect((await s.fetch('/api/version')).status).toBe(200);
  });
});
