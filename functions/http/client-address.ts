import type { Context } from 'hono';

/**
 * The address the request came from, as the platform saw it (never a client-sent header such as
 * X-Forwarded-For, which anyone can set): the socket's peer on Node, API Gateway's `sourceIp` on
 * Lambda. Null when neither is known.
 */
export function clientAddress(c: Context): string | null {
  const env = c.env as
    | { incoming?: { socket?: { remoteAddress?: string } }; event?: { requestContext?: { identity?: { sourceIp?: string }; http?: { sourceIp?: string } } } }
    | undefined;
  return env?.incoming?.socket?.remoteAddress ?? env?.event?.requestContext?.identity?.sourceIp ?? env?.event?.requestContext?.http?.sourceIp ?? null;
}
