import { describe, expect, it } from 'vitest';
import { Hono, type Context } from 'hono';
import { requestBodyLimit } from '../../../functions/http/body-limit.js';

/** A context whose request has `headers` and records whether anything asked for the request itself. */
function bodilessContext(headers: Record<string, string>) {
  const asked = { raw: false };
  const c = {
    req: {
      header: (name: string) => headers[name.toLowerCase()],
      get raw(): Request {
        asked.raw = true;
        throw new Error('the request itself was asked for');
      },
    },
  } as unknown as Context;
  return { c, asked };
}

/** A body of `bytes` bytes sent as a stream, so the request carries no Content-Length. */
function streamed(bytes: number): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('x'.repeat(bytes)));
      controller.close();
    },
  });
}

describe('the request body limit', () => {
  it('on an HTTP/1.1 server, reads nothing of a request with neither Content-Length nor Transfer-Encoding', async () => {
    const { c, asked } = bodilessContext({});
    let passed = false;
    await requestBodyLimit(10, undefined, { http1: true })(c, async () => {
      passed = true;
    });
    expect(passed).toBe(true);
    // Asking for the body made the Node adapter build a whole Request (and an AbortSignal) per GET.
    expect(asked.raw).toBe(false);
  });

  it('elsewhere (behind API Gateway a body may come without either header) counts what arrives', async () => {
    const app = new Hono();
    app.use('*', requestBodyLimit(10));
    app.post('/', (c) => c.text('taken'));
    const res = await app.request('/', { method: 'POST', body: streamed(64), duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
  });

  it('on an HTTP/1.1 server, still counts a chunked body and refuses it past the limit', async () => {
    const app = new Hono();
    app.use('*', requestBodyLimit(10, undefined, { http1: true }));
    app.post('/', (c) => c.text('taken'));
    const res = await app.request('/', { method: 'POST', body: streamed(64), duplex: 'half', headers: { 'transfer-encoding': 'chunked' } } as RequestInit);
    expect(res.status).toBe(413);
  });
});
