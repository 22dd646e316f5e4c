import { describe, expect, it } from 'vitest';
import { shapeSyncResponse, sandboxUserContent, InvalidResponseShape } from '../../functions/core/runs/sync-response.js';

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

  it('refuses headers that would set cookies, CORS, framing, security policy or HTTP framing, naming them', () => {
    for (const name of ['Set-Cookie', 'Access-Control-Allow-Origin', 'Content-Length', 'Transfer-Encoding', 'Connection',
      'X-Frame-Options', 'Content-Security-Policy', 'X-Content-Type-Options', 'Upgrade', 'Cross-Origin-Resource-Policy']) {
      expect(() => shapeSyncResponse({ svc_headers: { [name]: 'x' }, result: 1 }), name).toThrow(new RegExp(`may not set the header ${name}`));
    }
  });

  it('refuses header values outside Latin-1 or with control characters, naming the header', () => {
    expect(() => shapeSyncResponse({ svc_headers: { 'X-Name': 'Zoë ✓' } })).toThrow(/svc_headers\.X-Name .*Latin-1/);
    expect(() => shapeSyncResponse({ svc_headers: { 'X-Name': 'a\u0000b' } })).toThrow(/svc_headers\.X-Name/);
    expect(() => shapeSyncResponse({ svc_content_type: 'text/html; charset=\u2603' })).toThrow(/svc_content_type/);
    // Latin-1 (obs-text) and tabs are valid field content.
    expect(shapeSyncResponse({ svc_headers: { 'X-Name': 'Zo\u00eb\tok' } }).headers['x-name']).toBe('Zo\u00eb\tok');
  });

  it('serves what a script answers sandboxed and without sniffing', () => {
    const r = sandboxUserContent(shapeSyncResponse({ svc_content_type: 'text/html', result: '<script>alert(1)</script>' }));
    expect(r.headers['content-security-policy']).toBe('sandbox');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['content-type']).toBe('text/html');
  });

  it('sends navigation and credential headers only when told the caller authenticated with a header', () => {
    for (const name of ['Location', 'Refresh', 'Link', 'WWW-Authenticate']) {
      const shaped = { svc_status_code: 302, svc_headers: { [name]: '/x' } };
      expect(() => shapeSyncResponse(shaped), name).toThrow(new RegExp(`the header ${name} is only sent`));
      expect(shapeSyncResponse(shaped, { navigation: true }).headers[name.toLowerCase()]).toBe('/x');
    }
    expect(() => shapeSyncResponse({ svc_headers: { 'Service-Worker-Allowed': '/' } }, { navigation: true })).toThrow(/may not set the header Service-Worker-Allowed/);
  });
});
