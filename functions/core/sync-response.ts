/**
 * Spec 4.4: how a sync endpoint turns a finished job into an HTTP response. A script can steer
 * the status, content type and headers by returning `svc_status_code`, `svc_content_type`,
 * `svc_headers` next to `result`.
 */

export interface ShapedResponse {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

const SHAPING_KEYS = ['svc_status_code', 'svc_content_type', 'svc_headers'] as const;

// Statuses that forbid a body (RFC 9110 15.3.5, 15.4.5).
const NO_BODY = new Set([204, 205, 304]);

export class InvalidResponseShape extends Error {
  readonly code = 'invalid_svc_response';
}

export function shapeSyncResponse(result: unknown): ShapedResponse {
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
      if (typeof value !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n]/.test(value)) {
        throw new InvalidResponseShape(`svc_headers.${name} must be a valid header name with a string value`);
      }
      headers[name.toLowerCase()] = value;
    }
  }
  if (result.svc_content_type !== undefined) {
    if (typeof result.svc_content_type !== 'string' || /[\r\n]/.test(result.svc_content_type)) {
      throw new InvalidResponseShape('svc_content_type must be a string');
    }
    headers['content-type'] = result.svc_content_type;
  }
  if (NO_BODY.has(status)) return { status, headers, body: null };

  const body = result.result;
  const isJson = /^application\/(.+\+)?json\b/i.test(headers['content-type']);
  // A non-JSON content type with a string result is sent as that text, unquoted.
  const text = typeof body === 'string' && !isJson ? body : JSON.stringify(body ?? null);
  return { status, headers, body: text };
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
