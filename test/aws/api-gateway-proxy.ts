import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { HTTP_INTEGRATION_CONTENT_TYPE, type RuntimeResponseStream } from './lambda-streaming-runtime.js';

/**
 * API Gateway's part of a REST API with a Lambda proxy integration in STREAM response transfer
 * mode, reproduced on one machine: an HTTP request becomes the proxy event (payload format 1.0);
 * the function's response stream is read as API Gateway reads it (JSON metadata, 8 NUL bytes, then
 * the body, passed on as it arrives).
 */

/** Request bodies of these types reach the function base64-encoded; others as UTF-8 text. */
export const BINARY_MEDIA_TYPES = ['*/*']; // as lib/constructs/api.ts sets them

/** API Gateway looks for the metadata and its delimiter in the first 16 KB of the stream. */
const METADATA_LIMIT = 16 * 1024;
const DELIMITER = Buffer.alloc(8);

export interface ProxySettings {
  stage: string;
  binaryMediaTypes: string[];
}

export function proxyEvent(req: IncomingMessage, body: Buffer, settings: ProxySettings): APIGatewayProxyEvent {
  // The request target is a path (origin form): resolved against a base, one that starts with //
  // would be a scheme-relative URL (no host: a throw; //x/y: the path /y of host x).
  const target = req.url ?? '/';
  const url = target.startsWith('/') ? new URL(`http://placeholder${target}`) : new URL(target, 'http://placeholder');
  const { headers, multiValueHeaders } = headersOf(req);
  const query = queryOf(url.search);
  const contentType = multiValueHeaders[headerName(multiValueHeaders, 'content-type')]?.at(-1) ?? '';
  const binary = isBinary(contentType, settings.binaryMediaTypes);
  const host = req.headers.host ?? 'localhost';
  const now = new Date();
  return {
    resource: '/{proxy+}',
    path: url.pathname,
    httpMethod: req.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters: query.single,
    multiValueQueryStringParameters: query.multi,
    pathParameters: url.pathname === '/' ? null : { proxy: url.pathname.slice(1) },
    stageVariables: null,
    body: body.length === 0 ? null : binary ? body.toString('base64') : body.toString('utf8'),
    isBase64Encoded: body.length > 0 && binary,
    requestContext: {
      accountId: '123456789012',
      apiId: 'local',
      authorizer: null,
      domainName: host,
      domainPrefix: host.split('.')[0],
      extendedRequestId: randomUUID(),
      httpMethod: req.method ?? 'GET',
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        user: null,
        userAgent: req.headers['user-agent'] ?? null,
        userArn: null,
      },
      path: `/${settings.stage}${url.pathname}`,
      protocol: `HTTP/${req.httpVersion}`,
      requestId: randomUUID(),
      requestTime: now.toUTCString(),
      requestTimeEpoch: now.getTime(),
      resourceId: 'proxy',
      resourcePath: '/{proxy+}',
      stage: settings.stage,
    },
  };
}

/**
 * Answers `res` from the function's response stream: status and headers from the metadata, then
 * the body chunk by chunk. A stream that breaks before its metadata, or that carries none, is an
 * integration failure (502, as API Gateway answers); one that breaks later cuts the response off.
 */
export async function sendStreamedResponse(stream: RuntimeResponseStream, res: ServerResponse): Promise<void> {
  let head = Buffer.alloc(0);
  let metadata: StreamMetadata | undefined;
  try {
    // Read without destroying the stream on leaving the loop: the body follows through the pipeline.
    for await (const chunk of stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf(DELIMITER);
      if (end >= 0) {
        metadata = parseMetadata(stream.contentType, head.subarray(0, end));
        head = head.subarray(end + DELIMITER.length);
        break;
      }
      if (head.length > METADATA_LIMIT) throw new Error('no metadata delimiter in the first 16 KB of the response stream');
    }
    if (!metadata) throw new Error('the response stream ended before its metadata');
  } catch (error) {
    stream.destroy();
    console.error(JSON.stringify({ level: 'error', msg: 'lambda integration failed', error: String(error) }));
    res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Internal server error' }));
    return;
  }

  res.writeHead(metadata.statusCode, responseHeaders(metadata));
  // Flushes the status line and headers now: an SSE client sees the response start at once.
  res.flushHeaders();
  if (head.length > 0) res.write(head);
  try {
    await pipeline(stream as Readable, res);
  } catch {
    // The function failed mid-stream or the client went away: the connection ends here either way.
    res.destroy();
  }
}

interface StreamMetadata {
  statusCode: number;
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  cookies?: string[];
}

function parseMetadata(contentType: string, bytes: Buffer): StreamMetadata {
  if (contentType !== HTTP_INTEGRATION_CONTENT_TYPE) throw new Error(`the response stream has content type ${contentType}, not the HTTP integration prelude`);
  const parsed = JSON.parse(bytes.toString('utf8')) as Partial<StreamMetadata>;
  return { ...parsed, statusCode: parsed.statusCode ?? 200 };
}

// Hop-by-hop headers belong to each connection, not to the response the function describes.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade']);

function responseHeaders(metadata: StreamMetadata): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(metadata.headers ?? {})) out.push([name, value]);
  for (const [name, values] of Object.entries(metadata.multiValueHeaders ?? {})) for (const value of values) out.push([name, value]);
  for (const cookie of metadata.cookies ?? []) out.push(['set-cookie', cookie]);
  return out.filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase()));
}

/** Names as the client sent them; `headers` keeps the last value of each, as API Gateway does. */
function headersOf(req: IncomingMessage) {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const [name, value] = [req.rawHeaders[i], req.rawHeaders[i + 1]];
    const key = headerName(multiValueHeaders, name);
    (multiValueHeaders[key] ??= []).push(value);
    headers[key] = value;
  }
  return { headers, multiValueHeaders };
}

/** The spelling already used for a header name, compared without case. */
function headerName(headers: Record<string, unknown>, name: string): string {
  return Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name;
}

/** Decoded names and values; `null` rather than empty maps when there is no query, as API Gateway sends. */
function queryOf(search: string) {
  const multi: Record<string, string[]> = {};
  for (const pair of search.replace(/^\?/, '').split('&')) {
    if (!pair) continue;
    const at = pair.indexOf('=');
    const [name, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    (multi[decode(name)] ??= []).push(decode(value));
  }
  if (Object.keys(multi).length === 0) return { single: null, multi: null };
  const single = Object.fromEntries(Object.entries(multi).map(([name, values]) => [name, values.at(-1)!]));
  return { single, multi };
}

/** A malformed escape is passed on as written; the app decides what it means. */
function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function isBinary(contentType: string, binaryMediaTypes: string[]): boolean {
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  return binaryMediaTypes.some((pattern) => {
    const [type, subtype] = pattern.toLowerCase().split('/');
    const [actualType, actualSubtype] = mediaType.split('/');
    return (type === '*' || type === actualType) && (subtype === '*' || subtype === actualSubtype);
  });
}
