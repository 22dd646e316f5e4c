/**
 * Spec 4.4: how a sync endpoint turns a finished job into an HTTP response. A script can steer
 * the status, content type and headers by returning `svc_status_code`, `svc_content_type`,
 * `svc_headers` next to `result`, or Windmill's `windmill_status_code`, `windmill_content_type`
 * and `windmill_headers`, which mean the same (docs/windmill.md).
 */

export interface ShapedResponse {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

const SHAPING_KEYS = ['svc_status_code', 'svc_content_type', 'svc_headers'] as const;
/** Windmill's names for the same keys; svc's own win where a result has both. */
const WINDMILL_KEYS = { svc_status_code: 'windmill_status_code', svc_content_type: 'windmill_content_type', svc_headers: 'windmill_headers' } as const;

// Statuses that forbid a body (RFC 9110 15.3.5, 15.4.5).
const NO_BODY = new Set([204, 205, 304]);

export class InvalidResponseShape extends Error {
  readonly code = 'invalid_svc_response';
}

export interface ShapeOptions {
  /**
   * Whether the script may send navigation and credential headers (NAVIGATION_HEADERS): only to a
   * caller who proved a credential in a request header. A route anyone may call, or a token in the
   * URL (which a link carries to whoever clicks it), would let the service's origin redirect,
   * refresh, preload or ask for a password on a stranger's behalf.
   */
  navigation?: boolean;
}

export function shapeSyncResponse(value: unknown, options: ShapeOptions = {}): ShapedResponse {
  const result = withSvcKeys(value);
  if (!isShaped(result)) return json(200, result);

  const status = result.svc_status_code ?? 200;
  // RFC 9110 15: a status code is a three-digit integer; 1xx are interim and never a final response.
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
    throw new InvalidResponseShape(
      `svc_status_code must be an integer from 200 to 599 (RFC 9110), got ${JSON.stringify(status)}`,
    );
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const extra = result.svc_headers;
  if (extra !== undefined) {
    if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) {
      throw new InvalidResponseShape('svc_headers must be an object of header name to string');
    }
    for (const [name, value] of Object.entries(extra)) {
      checkScriptHeader(name, value, options.navigation === true);
      headers[name.toLowerCase()] = value.trim();
    }
  }
  if (result.svc_content_type !== undefined) {
    if (typeof result.svc_content_type !== 'string') throw new InvalidResponseShape('svc_content_type must be a string');
    checkFieldValue('svc_content_type', result.svc_content_type);
    headers['content-type'] = result.svc_content_type.trim();
  }
  if (NO_BODY.has(status)) return { status, headers, body: null };

  const body = result.result;
  const isJson = /^application\/(.+\+)?json\b/i.test(headers['content-type']);
  // A non-JSON content type with a string result is sent as that text, unquoted.
  const text = typeof body === 'string' && !isJson ? body : JSON.stringify(body ?? null);
  return { status, headers, body: text };
}

/**
 * Headers a script may not set: they would let the job's answer rewrite the service's cookies,
 * framing, CORS or security policy, or break HTTP framing itself (a wrong Content-Length hangs or
 * truncates the response; hop-by-hop headers belong to the connection, not the message).
 */
const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set([
  'set-cookie', 'set-cookie2', 'clear-site-data',
  'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'proxy-authenticate', 'proxy-authorization', 'content-length', 'content-encoding',
  'content-security-policy', 'content-security-policy-report-only', 'x-frame-options', 'x-content-type-options',
  'referrer-policy', 'strict-transport-security', 'permissions-policy', 'x-xss-protection',
  // Would let a script served from the service's origin register a service worker over all of it.
  'service-worker-allowed',
]);

/** Headers that navigate the browser or ask it for credentials (see ShapeOptions.navigation). */
const NAVIGATION_HEADERS: ReadonlySet<string> = new Set(['location', 'refresh', 'link', 'www-authenticate']);
const FORBIDDEN_PREFIXES = ['access-control-', 'cross-origin-'];

// RFC 9110 5.1: a field name is a token.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// RFC 9110 5.5: a field value is visible ASCII, SP, HTAB and obs-text (0x80-0xFF): Latin-1 without controls.
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

function checkScriptHeader(name: string, value: unknown, navigation: boolean): asserts value is string {
  if (!TOKEN.test(name)) throw new InvalidResponseShape(`svc_headers: ${JSON.stringify(name)} is not a valid header name (RFC 9110 5.1)`);
  const lower = name.toLowerCase();
  if (FORBIDDEN_HEADERS.has(lower) || FORBIDDEN_PREFIXES.some((p) => lower.startsWith(p))) {
    throw new InvalidResponseShape(`svc_headers: a script may not set the header ${name}`);
  }
  if (!navigation && NAVIGATION_HEADERS.has(lower)) {
    throw new InvalidResponseShape(
      `svc_headers: the header ${name} is only sent to a caller who authenticated with a request header (Authorization or the route's key, signature or password header), not to an unauthenticated route or a token in the URL`,
    );
  }
  if (typeof value !== 'string') throw new InvalidResponseShape(`svc_headers.${name} must be a string`);
  checkFieldValue(`svc_headers.${name}`, value);
}

function checkFieldValue(label: string, value: string): void {
  if (!FIELD_VALUE.test(value)) {
    throw new InvalidResponseShape(
      `${label} is not a valid header value: only Latin-1 characters without control characters (RFC 9110 5.5)`,
    );
  }
}

/**
 * Whatever a script answers is its content, not the service's: served with an opaque origin
 * (`sandbox`: no scripts, no cookies, no same-origin API calls) and without content sniffing, so
 * HTML a script returns cannot act as the logged-in user who opens the webhook URL.
 */
export function sandboxUserContent(shaped: ShapedResponse): ShapedResponse {
  return {
    ...shaped,
    headers: { ...shaped.headers, 'content-security-policy': 'sandbox', 'x-content-type-options': 'nosniff' },
  };
}

function isShaped(result: unknown): result is {
  svc_status_code?: unknown;
  svc_content_type?: unknown;
  svc_headers?: unknown;
  result?: unknown;
} {
  return (
    typeof result === 'object' &&
    result !== null &&
    !Array.isArray(result) &&
    SHAPING_KEYS.some((k) => k in (result as Record<string, unknown>))
  );
}

function json(status: number, value: unknown): ShapedResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(value ?? null) };
}

/** A result that shapes its response with Windmill's key names, as one that uses svc's. */
function withSvcKeys(result: unknown): unknown {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return result;
  const entries = Object.entries(WINDMILL_KEYS).filter(([svc, windmill]) => windmill in result && !(svc in result));
  if (entries.length === 0) return result;
  const out: Record<string, unknown> = { ...(result as Record<string, unknown>) };
  for (const [svc, windmill] of entries) out[svc] = out[windmill];
  return out;
}
