import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../core/common/errors.js';

/**
 * Headers every answer of the service carries, so no page can be framed (clickjacking), sniffed
 * into another type, or leak a secret URL (resume links) through `Referer`. A middleware rather
 * than per-page code: a page added later gets the same protection without remembering it.
 *
 * A response that already has a Content-Security-Policy keeps it: that is user content, which the
 * core serves sandboxed (core/runs/sync-response.ts) and which may be embedded where its owner wants.
 *
 * The request's id (hono's requestId middleware, app.ts) is added here too: that middleware names
 * only the answers made with the context's helpers (c.json, c.text, ...), not a Response a route
 * builds itself, such as a sync webhook's result. An answer that names itself keeps its own (a
 * script may set X-Request-Id in svc_headers, as Windmill's examples do).
 */
export const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  const res = c.res;
  const requestId = c.get('requestId') as string | undefined;
  if (!isHtml(res)) {
    // Set in place where the headers allow it: the Node adapter then still writes a string body
    // straight out (the sync webhooks' answers), without a stream and a second Response per request.
    try {
      addSecurityHeaders(res.headers, null, requestId);
      return;
    } catch {
      // Immutable headers (a Response.redirect, a fetched response): a copy below.
    }
  }
  // A fresh Response: the Node adapter's lightweight responses drop header changes made after a read.
  const headers = new Headers(res.headers);
  const body = isHtml(res) ? await res.text() : res.body;
  addSecurityHeaders(headers, typeof body === 'string' ? body : null, requestId);
  c.res = new Response(body, { status: res.status, statusText: res.statusText, headers });
};

function addSecurityHeaders(headers: Headers, html: string | null, requestId: string | undefined): void {
  if (requestId !== undefined && !headers.has('x-request-id')) headers.set('x-request-id', requestId);
  headers.set('x-content-type-options', 'nosniff');
  if (!headers.has('referrer-policy')) headers.set('referrer-policy', 'no-referrer');
  if (!headers.has('content-security-policy')) {
    headers.set('x-frame-options', 'DENY');
    headers.set('content-security-policy', pagePolicy(html));
  }
}

/** From the headers only: reading `body` would turn the adapter's string body into a stream. */
function isHtml(res: Response): boolean {
  return /^text\/html\b/i.test(res.headers.get('content-type') ?? '');
}

const NOTHING_ALLOWED = "default-src 'none'; base-uri 'none'; form-action 'none'";

/**
 * A page states what its inline script and style need (their hashes) in its own CSP meta tag, which
 * a `frame-ancestors` directive cannot live in; the header repeats that policy and adds it. An
 * answer that states nothing may load nothing.
 */
function pagePolicy(html: string | null): string {
  const policy = (html && metaPolicy(html)) || NOTHING_ALLOWED;
  return `${policy.replace(/;\s*$/, '')}; frame-ancestors 'none'`;
}

function metaPolicy(html: string): string | null {
  const end = html.search(/<\/head>/i);
  const head = end < 0 ? html : html.slice(0, end);
  const tag = head.match(/<meta\s+http-equiv=["']?content-security-policy["']?\s+content="([^"]*)"/i);
  return tag ? unescapeAttribute(tag[1]) : null;
}

function unescapeAttribute(value: string): string {
  return value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
// Sec-Fetch-Mode of a page script's fetch(); a navigation is `navigate`, an image `no-cors`.
const PAGE_SCRIPT_MODES = new Set(['cors', 'same-origin']);
// A GET on these starts a job: as state-changing as a POST.
const RUNNING_GETS = /^\/api\/w\/[^/]+\/jobs\/(run_wait_result|run_and_stream)\//;

/**
 * Cross-site request forgery guard for requests a browser authenticates by itself (the session
 * cookie). SameSite=Strict already keeps the cookie off cross-site requests; this also refuses
 * same-site-but-cross-origin ones and browsers that ignore SameSite. The browser's own
 * `Sec-Fetch-Site` is trusted first; without it the `Origin` must name this host. A client that
 * sends neither is not a browser page and cannot be forged into sending the cookie.
 */
export function assertSameOrigin(req: { method: string; path: string; header(name: string): string | undefined }): void {
  const runningGet = SAFE_METHODS.has(req.method) && RUNNING_GETS.test(req.path);
  if (SAFE_METHODS.has(req.method) && !runningGet) return;
  const site = req.header('sec-fetch-site');
  if (site !== undefined) {
    if (site === 'none') return;
    // A GET that runs a job is same-origin too when it is a link followed, a redirect or an image
    // on one of our pages (a link in a job's logs, an approval form's markdown, the login's `next`):
    // then whoever wrote the link chose the run, not the person whose session goes with it. Only
    // a script of ours (fetch: mode cors or same-origin) or the person's own address bar (none) may.
    if (site === 'same-origin' && (!runningGet || PAGE_SCRIPT_MODES.has(req.header('sec-fetch-mode') ?? ''))) return;
    throw crossOrigin();
  }
  const origin = req.header('origin');
  if (origin === undefined) return;
  const host = req.header('x-forwarded-host') ?? req.header('host');
  let originHost: string | null = null;
  try {
    originHost = new URL(origin).host;
  } catch {
    // `Origin: null` (sandboxed documents, some redirects) names no host: never same-origin.
  }
  if (!host || originHost !== host) throw crossOrigin();
}

function crossOrigin(): ApiError {
  return new ApiError(403, 'cross_origin_request', 'a request authenticated by the session cookie must come from this service\'s own pages; use an API token from other origins');
}
