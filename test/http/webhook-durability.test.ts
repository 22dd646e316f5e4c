import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { startServer, type TestServer } from './harness.js';
import { FAST_WEBHOOKS, startReceiver, type Receiver } from './webhook-receiver.js';

/**
 * Webhook deliveries survive what receivers and processes do: a receiver that never answers is
 * given up on after the attempt's timeout (and the API keeps answering), and kill -9 of the
 * service loses no pending delivery. The restart is of the local process on its data directory:
 * the AWS shell keeps its outbox in DynamoDB, which this machine's emulator does not keep across
 * a restart of the shell (see durability.test.ts).
 */

const servers: TestServer[] = [];
const receivers: Receiver[] = [];
const dirs: string[] = [];
const hanging: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  for (const h of hanging.splice(0)) {
    h.closeAllConnections();
    h.close();
  }
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

const localProcessOnly = process.env.SVC_TEST_SHELL === 'aws';

async function deliveries(s: TestServer): Promise<any[]> {
  return (await s.fetch(`/api/w/${s.workspace}/workspaces/webhook_deliveries`)).json();
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting; last seen: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Each test starts its own server (the AWS shell's starts DynamoDB Local first): hence their timeouts.
describe('webhook durability', () => {
  it('gives up an attempt at a receiver that never answers, says so in the log, and the API goes on', async () => {
    const silent = createServer(() => {
      // Never answers.
    });
    hanging.push(silent);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const s = await startServer({ env: { ...FAST_WEBHOOKS, SVC_WEBHOOK_TIMEOUT_MS: '500' } });
    servers.push(s);
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
    expect((await s.post(`/api/w/${s.workspace}/workspaces/edit_webhook`, { webhook: url })).status).toBe(200);
    expect((await s.post(`/api/w/${s.workspace}/folders/create`, { name: 'slow' })).status).toBe(201);
    const log = await until(() => deliveries(s), (l) => l.some((d) => d.attempt_count >= 1));
    expect(log[0]).toMatchObject({ type: 'CreateFolder', status: 'pending', last_status_code: null });
    expect(log[0].last_error).toMatch(/no answer within 500 ms/);
    expect(log[0].next_attempt_at).toEqual(expect.any(String));
    // Meanwhile the API answers as ever.
    expect((await s.post(`/api/w/${s.workspace}/folders/create`, { name: 'still_served' })).status).toBe(201);
  }, 120_000);

  it('follows a redirect with the same signed POST', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const mover = createServer((req, res) => {
      req.resume();
      res.writeHead(308, { location: receiver.url }).end();
    });
    hanging.push(mover);
    await new Promise<void>((r) => mover.listen(0, '127.0.0.1', r));
    const s = await startServer({ env: FAST_WEBHOOKS });
    servers.push(s);
    const moved = `http://127.0.0.1:${(mover.address() as AddressInfo).port}/old-hook`;
    expect((await s.post(`/api/w/${s.workspace}/workspaces/edit_webhook`, { webhook: moved, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })).status).toBe(200);
    expect((await s.post(`/api/w/${s.workspace}/folders/create`, { name: 'moved' })).status).toBe(201);
    await receiver.waitFor((e) => e.some((x) => x.subject === 'f/moved'));
    const request = receiver.requests.find((r) => r.body.includes('f/moved'))!;
    expect(new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').verify(request.body, request.headers as Record<string, string>)).toMatchObject({ type: 'CreateFolder' });
  }, 120_000);

  it.skipIf(localProcessOnly)('delivers after a kill -9 what was pending, in order', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-webhook-durable-'));
    dirs.push(dataDir);
    const receiver = await startReceiver();
    receivers.push(receiver);
    receiver.failNext(1_000_000, 503);
    const first = await startServer({ dataDir, token: 'durable-admin', env: FAST_WEBHOOKS });
    servers.push(first);
    const ws = `/api/w/${first.workspace}`;
    expect((await first.post(`${ws}/workspaces/edit_webhook`, { webhook: receiver.url })).status).toBe(200);
    expect((await first.post(`${ws}/folders/create`, { name: 'kept' })).status).toBe(201);
    expect((await first.post(`${ws}/folders/update/kept`, { summary: 'one' })).status).toBe(200);
    expect((await first.fetch(`${ws}/folders/delete/kept`, { method: 'DELETE' })).status).toBe(200);
    await until(() => deliveries(first), (l) => l.length === 3 && l.some((d) => d.attempt_count >= 1));
    await first.kill9();
    servers.splice(servers.indexOf(first), 1);

    receiver.failNext(0);
    const second = await startServer({ dataDir, token: 'durable-admin', env: FAST_WEBHOOKS });
    servers.push(second);
    const events = await receiver.waitFor((e) => e.filter((x) => x.subject === 'f/kept').length === 3);
    expect(events.filter((x) => x.subject === 'f/kept').map((x) => x.type)).toEqual(['CreateFolder', 'UpdateFolder', 'DeleteFolder']);
    const log = await until(() => deliveries(second), (l) => l.every((d) => d.status === 'delivered'));
    // The first event was refused before the kill; the later ones waited behind it (order per item).
    const created = log.find((d) => d.type === 'CreateFolder');
    expect(created.attempts.map((a: any) => a.status_code)).toContain(503);
    expect(created.attempts.at(-1).status_code).toBe(200);
  }, 120_000);
});
