import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { SESSION_COOKIE } from '../core/identity/users.js';

/**
 * The login session's cookie (docs/users-and-tokens.md). Over HTTPS it is `__Host-svc_session`:
 * a browser takes a cookie of that name only from this very origin (Secure, Path=/, no Domain), so
 * a page on a sibling subdomain (another app under the same company domain, say) cannot plant a
 * session of its own choosing in the browser (a login CSRF: the victim then works, and approves,
 * in the attacker's account). Over plain HTTP (the local service on 127.0.0.1) a browser refuses
 * `__Host-` cookies, so there it is `svc_session`, and over HTTPS that name is never read.
 */

/**
 * Whether the browser reached us over HTTPS: the request's own scheme, or what a proxy that ends
 * TLS says in X-Forwarded-Proto. A client that sets it itself only changes which of its own
 * cookies is read, never another's.
 */
export function overHttps(c: Context): boolean {
  // A prefix test, not a parse: this runs for every API request, webhooks included.
  return c.req.url.startsWith('https:') || c.req.header('x-forwarded-proto')?.split(',')[0].trim().toLowerCase() === 'https';
}

/** The name the session cookie has on this request's scheme (the API document names it). */
export function sessionCookieName(c: Context): string {
  return overHttps(c) ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE;
}

/** The session this request carries, if any: over HTTPS only the `__Host-` cookie counts. */
export function sessionOf(c: Context): string | null {
  return (overHttps(c) ? getCookie(c, SESSION_COOKIE, 'host') : getCookie(c, SESSION_COOKIE)) ?? null;
}

/**
 * Every session this request carries, under either name: a logout ends them all. Ending one is
 * never a risk (a session planted under the other name is the planter's own to lose), and a proxy
 * that reports the scheme of the logout otherwise than the login's would leave alive a session
 * its browser asked to end, under an answer saying it was.
 */
export function sessionsToEnd(c: Context): string[] {
  return [...new Set([getCookie(c, SESSION_COOKIE, 'host'), getCookie(c, SESSION_COOKIE)])].filter((v): v is string => !!v);
}

export function setSession(c: Context, token: string, expires: Date): void {
  setCookie(c, SESSION_COOKIE, token, {
    httpOnly: true,
    // Strict: no other site can make a browser send the session along (no CSRF on POST or GET runs).
    sameSite: 'Strict',
    expires,
    ...(overHttps(c) ? { prefix: 'host' as const } : { path: '/' }),
  });
}

export function clearSession(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, overHttps(c) ? { prefix: 'host' } : { path: '/' });
}
