import { describe, expect, it } from 'vitest';
import { shapeSyncResponse, InvalidResponseShape } from '../../functions/core/sync-response.js';

describe('shapeSyncResponse (spec 4.4)', () => {
  it('answers plain results as JSON with 200', () => {
    expect(shapeSyncResponse({ a: 1 })).toEqual({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(shapeSyncResponse('x').body).toBe('"x"');
    expect(shapeSyncResponse(undefined).body).toBe('null');
  });

  it('answers an error result with 200 (7.1)', () => {
    expect(shapeSyncResponse({ error: { name: 'Error', message: 'boom' } }).status).toBe(200);
  });

  it('applies status, content type and headers, with result as the body', () => {
    const r = shapeSyncResponse({ svc_status_code: 418, svc_content_type: 'text/plain', svc_headers: { 'X-A': 'b' }, result: 'tea' });
    expect(r).toEqual({ status: 418, headers: { 'content-type': 'text/plain', 'x-a': 'b' }, body: 'tea' });
  });

  it('keeps JSON content when only headers are set, and prefers svc_content_type over a header', () => {
    expect(shapeSyncResponse({ svc_headers: { 'X-A': 'b' }, result: { ok: true } })).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json', 'x-a': 'b' },
      body: '{"ok":true}',
    });
    expect(shapeSyncResponse({ svc_headers: { 'Content-Type': 'text/html' }, svc_content_type: 'text/csv', result: 'a' }).headers['content-type']).toBe('text/csv');
  });

  it('sends no body for 204 and 304', () => {
    expect(shapeSyncResponse({ svc_status_code: 204, result: 'ignored' }).body).toBeNull();
  });

  it('rejects status codes outside RFC 9110 final responses and bad headers (7.2)', () => {
    for (const code of [99, 100, 600, 200.5, '200']) {
      expect(() => shapeSyncResponse({ svc_status_code: code, result: 1 }), String(code)).toThrow(InvalidResponseShape);
    }
    expect(() => shapeSyncResponse({ svc_headers: { 'Bad Header': 'x' } })).toThrow(InvalidResponseShape);
    expect(() => shapeSyncResponse({ svc_headers: { 'X-A': 'a\r\nInjected: 1' } })).toThrow(InvalidResponseShape);
    expect(() => shapeSyncResponse({ svc_headers: { 'X-A': 1 } })).toThrow(InvalidResponseShape);
  });
});
