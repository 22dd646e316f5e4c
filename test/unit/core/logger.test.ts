import { describe, expect, it } from 'vitest';
import { createLogger, redact, REDACTED, type LogFormat, type LogLevel } from '../../../functions/core/common/logger.js';

function capture(format: LogFormat) {
  const lines: { level: LogLevel; line: string }[] = [];
  const logger = createLogger({ format, write: (level, line) => lines.push({ level, line }), now: () => new Date('2026-01-02T03:04:05.000Z') });
  return { logger, lines };
}

describe('logger: JSON lines (the AWS shell)', () => {
  it('writes one JSON object per line with time, level, message, context and fields', () => {
    const { logger, lines } = capture('json');
    logger.child({ request_id: 'req-1', workspace_id: 'demo' }).child({ job_id: 'j-9' }).error('job execution failed', { error: 'boom' });
    expect(lines).toHaveLength(1);
    expect(lines[0].level).toBe('error');
    expect(JSON.parse(lines[0].line)).toEqual({
      time: '2026-01-02T03:04:05.000Z', level: 'error', msg: 'job execution failed', request_id: 'req-1', workspace_id: 'demo', job_id: 'j-9', error: 'boom',
    });
  });

  it('never writes a secret field or an in-text credential', () => {
    const { logger, lines } = capture('json');
    logger.info('request failed', {
      token: 'tok_live_123',
      password: 'hunter2',
      headers: { Authorization: 'Bearer abc.def.ghi', 'content-type': 'application/json' },
      variable: { path: 'u/admin/key', value: 's3cr3t-value', is_secret: true },
      error: 'upstream said: Authorization: Bearer abc.def.ghi rejected; see /api/x?token=tok_live_123&a=1',
    });
    const line = lines[0].line;
    for (const secret of ['tok_live_123', 'hunter2', 'abc.def.ghi', 's3cr3t-value']) expect(line).not.toContain(secret);
    const record = JSON.parse(line);
    expect(record.token).toBe(REDACTED);
    expect(record.headers).toEqual({ Authorization: REDACTED, 'content-type': 'application/json' });
    expect(record.variable).toEqual({ path: 'u/admin/key', value: REDACTED, is_secret: true });
    expect(record.error).toBe(`upstream said: Authorization: Bearer ${REDACTED} rejected; see /api/x?token=${REDACTED}&a=1`);
  });
});

describe('logger: readable text (the local shell)', () => {
  it('writes time, level, message, then key=value fields, quoting values with spaces', () => {
    const { logger, lines } = capture('text');
    logger.child({ job_id: 'j-1', workspace_id: 'demo' }).warn('flow advance failed', { error: 'no such step', attempt: 3 });
    expect(lines).toEqual([
      { level: 'warn', line: '2026-01-02T03:04:05.000Z WARN flow advance failed job_id=j-1 workspace_id=demo error="no such step" attempt=3' },
    ]);
  });

  it('masks secrets in text too, and info goes to the info stream', () => {
    const { logger, lines } = capture('text');
    logger.info('token sweep', { secret: 'x', noticed: 2 });
    expect(lines).toEqual([{ level: 'info', line: `2026-01-02T03:04:05.000Z INFO token sweep secret=${REDACTED} noticed=2` }]);
  });
});

describe('redact', () => {
  it('keeps what is not secret and walks arrays and nested objects', () => {
    expect(redact({ a: [{ api_key: 'k', n: 1 }], b: null, cookie: undefined })).toEqual({ a: [{ api_key: REDACTED, n: 1 }], b: null, cookie: undefined });
  });
});
