import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the client libraries sent: enough to check the URL, the method and the token. */
export interface SeenRequest {
  method: string;
  url: string;
  authorization: string | undefined;
}

export interface FakeAnswer {
  status: number;
  /** Sent as JSON; a string is sent as it is (to play a proxy's error page). */
  body: unknown;
}

export interface FakeApi {
  /** `http://127.0.0.1:<port>`, what a job gets as BASE_INTERNAL_URL. */
  baseUrl: string;
  requests: SeenRequest[];
  /** Answers for raw request URLs (path and query as sent, still percent-encoded). */
  routes: Map<string, FakeAnswer>;
  close(): Promise<void>;
}

/**
 * A stand-in for the svc API on loopback: it records every request and answers from `routes`;
 * anything else gets the API's 404 shape, {"error": {"code", "message"}}.
 */
export async function startFakeApi(): Promise<FakeApi> {
  const requests: SeenRequest[] = [];
  const routes = new Map<string, FakeAnswer>();
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '';
    requests.push({ method: req.method ?? '', url, authorization: req.headers.authorization });
    const answer = routes.get(url) ?? { status: 404, body: { error: { code: 'not_found', message: `nothing at ${url}` } } };
    const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    res.writeHead(answer.status, { 'content-type': typeof answer.body === 'string' ? 'text/html' : 'application/json' });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    routes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The API's error body. */
export const apiError = (status: number, code: string, message: string): FakeAnswer => ({ status, body: { error: { code, message } } });
