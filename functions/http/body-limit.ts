import { bodyLimit } from 'hono/body-limit';
import type { Context, MiddlewareHandler } from 'hono';
import { ApiError } from '../core/common/errors.js';
import { errorResponse } from './errors.js';

/**
 * Refuses request bodies over `maxBytes` with a 413, deciding from the framing headers where it
 * can: a declared Content-Length (without Transfer-Encoding, RFC 9112 6.3) is compared as it is,
 * as the body cannot be longer (Node's parser reads exactly that many bytes). Anything else is
 * counted as it is read (hono's bodyLimit). Hono's middleware alone touches the body stream of
 * every request first, which makes the Node adapter build a web stream and a full Request where
 * it otherwise reads the body straight into a buffer: a cost on every webhook call.
 *
 * `http1`: the requests come from an HTTP/1.1 server (the local shell's), where a request with
 * neither header has no body at all (RFC 9112 6.3): nothing is read for it. Asking such a request
 * for its body made the Node adapter build a full Request, with an AbortSignal, for every GET, and
 * those kept what each request allocated alive through V8's young-generation collections.
 */
export function requestBodyLimit(
  maxBytes: number,
  tooLarge: (c: Context) => ApiError = () => new ApiError(413, 'payload_too_large', `the request body exceeds the limit of ${maxBytes} bytes`),
  framing: { http1: boolean } = { http1: false },
): MiddlewareHandler {
  const counted = bodyLimit({ maxSize: maxBytes, onError: (c) => errorResponse(c, tooLarge(c)) });
  return async (c, next) => {
    const declared = c.req.header('content-length');
    const chunked = c.req.header('transfer-encoding') !== undefined;
    if (framing.http1 && declared === undefined && !chunked) return next();
    if (declared === undefined || !/^\d{1,15}$/.test(declared) || chunked) return counted(c, next);
    if (Number(declared) > maxBytes) return errorResponse(c, tooLarge(c));
    await next();
  };
}
