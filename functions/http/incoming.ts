import { Readable } from 'node:stream';
import type Busboy from 'busboy';
import type { Context } from 'hono';
import { ApiError } from '../core/common/errors.js';
import { onFirstUse, requireHere } from '../core/common/on-first-use.js';
import type { IncomingRequest, MultipartPart } from '../core/runs/payload.js';

/** A form field is an argument's text, held in memory: bounded so a streamed body cannot fill it. */
const MAX_FIELD_BYTES = 16 * 1024 * 1024;
const MAX_PARTS = 1000;

export interface IncomingLimits {
  /** The largest file a multipart body may carry (SVC_MAX_UPLOAD_BYTES). */
  maxFileBytes: number;
  /** Whether a multipart body may be streamed; not where the whole body is needed (signed custom routes). */
  stream: boolean;
}

/**
 * Whether the request's body is read as a stream (never whole): a multipart/form-data webhook,
 * unless `raw=true` asks for the whole body as an argument. Only such requests may exceed the
 * body limit, where the shell streams (the local one; API Gateway buffers every body).
 */
export function streamsBody(c: Context): boolean {
  return c.req.method !== 'GET' && c.req.method !== 'HEAD' && isMultipart(c.req.header('content-type')) && c.req.query('raw') !== 'true';
}

/** Reads a webhook request into the plain shape the core's payload rules work on. */
export async function toIncoming(c: Context, limits: IncomingLimits): Promise<IncomingRequest> {
  const contentType = c.req.header('content-type') ?? null;
  const headers: Record<string, string> = {};
  c.req.raw.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  const query = c.req.query();
  if (limits.stream && streamsBody(c) && c.req.raw.body) {
    return { contentType, body: new Uint8Array(), query, headers, multipart: multipartParts(contentType!, Readable.fromWeb(c.req.raw.body as never), limits) };
  }
  const raw = c.req.method === 'GET' || c.req.method === 'HEAD' ? new ArrayBuffer(0) : await c.req.arrayBuffer();
  const body = new Uint8Array(raw);
  const incoming: IncomingRequest = { contentType, body, query, headers };
  if (isMultipart(contentType)) incoming.multipart = multipartParts(contentType!, Readable.from([Buffer.from(body)]), limits);
  return incoming;
}

function isMultipart(contentType: string | null | undefined): boolean {
  return Boolean(contentType && /^multipart\/form-data/i.test(contentType));
}

type Parsed = MultipartPart | { kind: 'file-stream'; field: string; filename: string; contentType: string; stream: Readable };

/** Loaded with the first multipart body (on-first-use.ts). */
const busboy = onFirstUse(() => (typeof require === 'function' ? require('busboy') : requireHere('busboy')) as typeof Busboy);

/**
 * The parts of a multipart body as busboy reads them from `source`. A file's bytes are handed on
 * as they arrive: busboy stops reading the body until they are consumed, so memory holds a chunk
 * at a time whatever the file's size.
 */
function multipartParts(contentType: string, source: Readable, limits: IncomingLimits): AsyncIterable<MultipartPart> {
  return {
    async *[Symbol.asyncIterator]() {
      let parser: Busboy.Busboy;
      try {
        parser = busboy({
          headers: { 'content-type': contentType },
          // busboy cuts a file when it reaches fileSize: one byte more lets a file of exactly the limit through.
          limits: { fileSize: limits.maxFileBytes + 1, fieldSize: MAX_FIELD_BYTES, parts: MAX_PARTS },
          defParamCharset: 'utf8',
        });
      } catch {
        throw new ApiError(400, 'invalid_multipart', 'the multipart/form-data body could not be parsed: the content type needs a boundary');
      }
      const queue: Parsed[] = [];
      let finished = false;
      let failure: unknown = null;
      let wake: (() => void) | null = null;
      const signal = () => {
        wake?.();
        wake = null;
      };
      parser.on('field', (name, value, info) => {
        if (info.valueTruncated) failure ??= new ApiError(413, 'payload_too_large', `the form field ${name} is longer than ${MAX_FIELD_BYTES} bytes`);
        queue.push({ kind: 'field', name, value });
        signal();
      });
      parser.on('file', (field, stream, info) => {
        queue.push({ kind: 'file-stream', field, filename: info.filename ?? '', contentType: info.mimeType || 'application/octet-stream', stream });
        signal();
      });
      parser.on('partsLimit', () => {
        failure ??= new ApiError(413, 'payload_too_large', `a multipart body may have at most ${MAX_PARTS} parts`);
        signal();
      });
      parser.on('error', () => {
        failure ??= new ApiError(400, 'invalid_multipart', 'the multipart/form-data body could not be parsed');
        signal();
      });
      parser.on('close', () => {
        finished = true;
        signal();
      });
      source.on('error', (e) => {
        failure ??= e;
        signal();
      });
      source.pipe(parser);
      try {
        for (;;) {
          if (failure) throw failure;
          const next = queue.shift();
          if (next?.kind === 'file-stream') {
            yield { kind: 'file', field: next.field, filename: next.filename, contentType: next.contentType, body: limitedFile(next.stream, limits.maxFileBytes) };
            // Whatever the consumer left unread is skipped, so the parser moves on to the next part.
            next.stream.resume();
          } else if (next) {
            yield next;
          } else if (finished) {
            return;
          } else {
            await new Promise<void>((resolve) => (wake = resolve));
          }
        }
      } finally {
        // Stopped early (a refused file, an error): the rest of the body is read and dropped, never
        // held, so the response still reaches the client.
        if (!finished) {
          source.unpipe(parser);
          source.resume();
        }
      }
    },
  };
}

/** A file's bytes; fails at the end when busboy cut it at the size limit. */
async function* limitedFile(stream: Readable & { truncated?: boolean }, maxBytes: number): AsyncIterable<Uint8Array> {
  for await (const chunk of stream) yield chunk as Uint8Array;
  if (stream.truncated) {
    throw new ApiError(413, 'payload_too_large', `a file is larger than the upload limit of ${maxBytes} bytes (SVC_MAX_UPLOAD_BYTES; larger files take the upload route, docs/webhooks.md, Large uploads)`);
  }
}
