import { Hono } from 'hono';
import { requestId } from 'hono/request-id';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { errorResponse } from '../../../functions/http/errors.js';
import { useLogFormat } from '../../../functions/core/common/logger.js';

/** The HTTP layer's one log line for an unexpected error: which request, never a credential. */
function app() {
  const a = new Hono();
  a.onError((err, c) => errorResponse(c, err));
  a.use('*', requestId());
  a.get('/boom', () => {
    throw new Error('upstream refused Authorization: Bearer sk_live_abc123');
  });
  return a;
}

afterEach(() => {
  vi.restoreAllMocks();
  useLogFormat('text');
});

describe('unhandled errors', () => {
  it('answer 500 without internals and log one line with the request id, the secret masked', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    useLogFormat('json');
    const res = await app().request('/boom', { headers: { 'x-request-id': 'req-42' } });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: 'internal', message: 'internal error' } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('sk_live_abc123');
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'error', msg: 'unhandled error', request_id: 'req-42', method: 'GET', path: '/boom', error: 'upstream refused Authorization: Bearer [redacted]' });
  });

  it('log readable text in the local format', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    await app().request('/boom', { headers: { 'x-request-id': 'req-43' } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\S+Z ERROR unhandled error request_id=req-43 method=GET path=\/boom error="upstream refused Authorization: Bearer \[redacted\]"$/);
  });
});
