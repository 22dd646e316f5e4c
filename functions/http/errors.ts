import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ApiError } from '../core/errors.js';

/** Every error leaves as `{"error": {"code", "message"}}`; internals never reach the caller. */
export function errorResponse(c: Context, err: unknown): Response {
  if (err instanceof ApiError) {
    if (typeof err.details?.retry_after === 'number') c.header('retry-after', String(err.details.retry_after));
    return c.json({ error: { code: err.code, message: err.message, ...err.details } }, err.status as ContentfulStatusCode);
  }
  console.error(JSON.stringify({ level: 'error', msg: 'unhandled error', path: c.req.path, error: err instanceof Error ? err.message : String(err) }));
  return c.json({ error: { code: 'internal', message: 'internal error' } }, 500);
}

export function notFoundResponse(c: Context): Response {
  return c.json({ error: { code: 'not_found', message: `no route for ${c.req.method} ${c.req.path}` } }, 404);
}
