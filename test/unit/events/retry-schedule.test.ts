import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE, nextAttemptAt, retryScheduleFromEnv } from '../../../functions/core/events/retry-schedule.js';

describe('webhook retry schedule', () => {
  const created = new Date('2026-01-01T00:00:00Z');
  const waitAfter = (failures: number, random: number, now = created) => nextAttemptAt(DEFAULT_RETRY_SCHEDULE, created, failures, now, () => random)!.getTime() - now.getTime();

  it('retries first within seconds, then doubles, with jitter between half and all of each step', () => {
    expect(waitAfter(1, 0)).toBe(2_500);
    expect(waitAfter(1, 1)).toBe(5_000);
    expect(waitAfter(2, 1)).toBe(10_000);
    expect(waitAfter(3, 0.5)).toBe(15_000);
  });

  it('never waits more than the maximum step', () => {
    expect(waitAfter(30, 1)).toBe(3_600_000);
  });

  it('keeps retrying for at least 24 hours, then gives up', () => {
    const day = new Date(created.getTime() + 24 * 3_600_000);
    expect(nextAttemptAt(DEFAULT_RETRY_SCHEDULE, created, 40, day, () => 1)).not.toBeNull();
    const later = new Date(created.getTime() + 25 * 3_600_000);
    expect(nextAttemptAt(DEFAULT_RETRY_SCHEDULE, created, 41, later, () => 0)).toBeNull();
  });

  it('reads the instance settings, and refuses nonsense', () => {
    expect(retryScheduleFromEnv({})).toEqual(DEFAULT_RETRY_SCHEDULE);
    expect(retryScheduleFromEnv({ SVC_WEBHOOK_RETRY_FIRST_MS: '200', SVC_WEBHOOK_RETRY_MAX_MS: '1000', SVC_WEBHOOK_GIVE_UP_HOURS: '0.5', SVC_WEBHOOK_TIMEOUT_MS: '2000' })).toEqual({
      firstMs: 200,
      maxMs: 1000,
      giveUpAfterMs: 1_800_000,
      timeoutMs: 2000,
    });
    expect(() => retryScheduleFromEnv({ SVC_WEBHOOK_RETRY_FIRST_MS: 'soon' })).toThrow(/SVC_WEBHOOK_RETRY_FIRST_MS/);
  });
});
