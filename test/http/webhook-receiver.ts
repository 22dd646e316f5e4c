import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Webhook settings for tests: loopback allowed, retries and polling in fractions of a second. */
export const FAST_WEBHOOKS = {
  SVC_WEBHOOK_ALLOW_PRIVATE: '1',
  SVC_WEBHOOK_RETRY_FIRST_MS: '200',
  SVC_WEBHOOK_RETRY_MAX_MS: '1000',
  SVC_WEBHOOK_POLL_MS: '100',
  SVC_WEBHOOK_TIMEOUT_MS: '2000',
};

/**
 * A webhook receiver on loopback, as a user would run one: it keeps every request it gets and
 * answers 200, or `status` for the next `failures` requests.
 */
export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Answers `status` to the next `count` requests. */
  failNext(count: number, status?: number): void;
  /** The CloudEvents received so far, parsed, of the requests that were answered 2xx. */
  events(): Array<Record<string, any>>;
  waitFor(done: (events: Array<Record<string, any>>) => boolean, timeoutMs?: number): Promise<Array<Record<string, any>>>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let failures = 0;
  let failStatus = 500;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = failures > 0 ? failStatus : 200;
      if (failures > 0) failures -= 1;
      requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const receiver: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests,
    failNext(count, status = 500) {
      failures = count;
      failStatus = status;
    },
    events: () => requests.filter((r) => r.status < 300).map((r) => JSON.parse(r.body)),
    async waitFor(done, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(receiver.events())) {
        if (Date.now() > deadline) throw new Error(`the receiver did not get the expected events; it got: ${JSON.stringify(receiver.events().map((e) => `${e.type} ${e.subject}`))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return receiver.events();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}
