import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { streamHandle } from 'hono/aws-lambda';
import { stream } from 'hono/streaming';
import { BINARY_MEDIA_TYPES, proxyEvent, sendStreamedResponse } from './api-gateway-proxy.js';
import { lambdaContext } from './lambda-context.js';
import { HTTP_INTEGRATION_CONTENT_TYPE, installLambdaStreamingGlobals, invokeStreaming } from './lambda-streaming-runtime.js';

/**
 * The one-machine stand-ins for the Lambda runtime's response streaming and API Gateway's STREAM
 * proxy integration keep the contracts of the real ones; the http tier relies on them.
 */

installLambdaStreamingGlobals();
const app = new Hono();
app.get('/cookies', (c) => {
  c.header('set-cookie', 'a=1', { append: true });
  c.header('set-cookie', 'b=2', { append: true });
  return c.json({ ok: true }, 201, { 'x-custom': 'yes' });
});
app.get('/slow', (c) =>
  stream(c, async (s) => {
    await s.write('first;');
    await new Promise((r) => setTimeout(r, 400));
    await s.write('second');
  }),
);
app.post('/echo', async (c) => c.json({ query: c.req.queries(), type: c.req.header('content-type'), body: await c.req.text() }));
const handler = streamHandle(app);

let server: Server;
let url: string;
let target: unknown = handler;
beforeAll(async () => {
  const bridge = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await read(req);
    const event = proxyEvent(req, body, { stage: 'test', binaryMediaTypes: BINARY_MEDIA_TYPES });
    await sendStreamedResponse(invokeStreaming(target, event, lambdaContext('test', 10_000)), res);
  };
  // A failed bridge ends the connection, so the test sees it instead of an unhandled rejection.
  server = createServer((req, res) => {
    bridge(req, res).catch((error: unknown) => res.destroy(error instanceof Error ? error : new Error(String(error))));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('response streaming as Lambda and API Gateway do it', () => {
  it('writes the metadata prelude, 8 NUL bytes, then the body', async () => {
    const event = { httpMethod: 'GET', path: '/cookies', headers: { host: 'h' }, body: null, isBase64Encoded: false, requestContext: {} };
    const out = invokeStreaming(handler, event, lambdaContext('test', 10_000));
    const bytes = await read(out);
    expect(out.contentType).toBe(HTTP_INTEGRATION_CONTENT_TYPE);
    const split = bytes.indexOf(Buffer.alloc(8));
    expect(JSON.parse(bytes.subarray(0, split).toString())).toMatchObject({ statusCode: 201, cookies: ['a=1', 'b=2'], headers: { 'x-custom': 'yes' } });
    expect(bytes.subarray(split + 8).toString()).toBe('{"ok":true}');
  });

  it('answers with the status, headers and every cookie of the metadata', async () => {
    const res = await fetch(`${url}/cookies`);
    expect(res.status).toBe(201);
    expect(res.headers.get('x-custom')).toBe('yes');
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await res.json()).toEqual({ ok: true });
  });

  it('passes chunks on as the function writes them', async () => {
    const res = await fetch(`${url}/slow`);
    const reader = res.body!.getReader();
    const started = Date.now();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first;');
    expect(Date.now() - started).toBeLessThan(300);
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest).toBe('second');
  });

  it('hands bodies over as text, or base64 for the binary media types, and queries decoded', async () => {
    const res = await fetch(`${url}/echo?a=1&a=x%20y&b=%%`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'héllo' });
    expect(await res.json()).toEqual({ query: { a: ['1', 'x y'], b: ['%%'] }, type: 'text/plain', body: 'héllo' });

    const req = { method: 'POST', url: '/echo', headers: {}, rawHeaders: ['Content-Type', 'application/octet-stream; x=1', 'X-A', '1', 'x-a', '2'], httpVersion: '1.1', socket: {} };
    const event = proxyEvent(req as unknown as IncomingMessage, Buffer.from([0, 255]), { stage: 'test', binaryMediaTypes: BINARY_MEDIA_TYPES });
    expect(event).toMatchObject({ isBase64Encoded: true, body: 'AP8=', headers: { 'X-A': '2' }, multiValueHeaders: { 'X-A': ['1', '2'] }, queryStringParameters: null });
  });

  it('keeps a path that starts with two slashes as it came (no scheme-relative URL)', () => {
    // Found by test/http/fuzz.test.ts (seed 16, http-aws): GET // answered 502, the proxy having
    // read the target as a URL with an empty host; //x/y would have become the path /y of host x.
    for (const path of ['//', '//x/y', '/a//b']) {
      const req = { method: 'GET', url: `${path}?q=1`, headers: {}, rawHeaders: [], httpVersion: '1.1', socket: {} };
      const event = proxyEvent(req as unknown as IncomingMessage, Buffer.alloc(0), { stage: 'test', binaryMediaTypes: BINARY_MEDIA_TYPES });
      expect(event).toMatchObject({ path, pathParameters: { proxy: path.slice(1) }, queryStringParameters: { q: '1' } });
    }
  });

  it('answers 502 when the function fails before its metadata, or sends none', async () => {
    const failing = (globalThis as unknown as { awslambda: typeof awslambda }).awslambda.streamifyResponse(async () => {
      throw new Error('boom');
    });
    const bare = (globalThis as unknown as { awslambda: typeof awslambda }).awslambda.streamifyResponse(async (_event, responseStream) => {
      responseStream.end('no prelude');
    });
    for (const fn of [failing, bare]) {
      target = fn;
      const res = await fetch(`${url}/anything`);
      expect(res.status).toBe(502);
      expect(await res.json()).toEqual({ message: 'Internal server error' });
    }
    target = handler;
  });
});

async function read(from: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of from) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
