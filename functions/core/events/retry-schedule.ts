/**
 * When a failed delivery is tried again: exponential backoff from `firstMs`, doubling up to
 * `maxMs`, with jitter (each wait is drawn between half and all of its step, so receivers that
 * failed together are not retried together), for `giveUpAfterMs` after the event was recorded.
 * An instance setting (README: Webhooks), which tests shorten.
 */
export interface RetrySchedule {
  firstMs: number;
  maxMs: number;
  giveUpAfterMs: number;
  /** One attempt's time limit: a slow receiver counts as failed after it. */
  timeoutMs: number;
}

export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = {
  firstMs: 5_000,
  maxMs: 3_600_000,
  // At least 24 hours of retries, as the issue asks: a day and an hour.
  giveUpAfterMs: 25 * 3_600_000,
  timeoutMs: 10_000,
};

/** The wait after the `failures`-th failed attempt (1: the first retry), or null: give up. */
export function nextAttemptAt(schedule: RetrySchedule, createdAt: Date, failures: number, now: Date, random: () => number = Math.random): Date | null {
  const step = Math.min(schedule.maxMs, schedule.firstMs * 2 ** Math.min(failures - 1, 40));
  const wait = step / 2 + random() * (step / 2);
  const at = new Date(now.getTime() + wait);
  return at.getTime() - createdAt.getTime() > schedule.giveUpAfterMs ? null : at;
}

/** SVC_WEBHOOK_RETRY_FIRST_MS, _MAX_MS, SVC_WEBHOOK_GIVE_UP_HOURS, SVC_WEBHOOK_TIMEOUT_MS; both shells read the same names. */
export function retryScheduleFromEnv(env: Record<string, string | undefined>): RetrySchedule {
  const read = (name: string, fallback: number, scale = 1): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}: expected a positive number, got ${JSON.stringify(raw)}`);
    return n * scale;
  };
  return {
    firstMs: read('SVC_WEBHOOK_RETRY_FIRST_MS', DEFAULT_RETRY_SCHEDULE.firstMs),
    maxMs: read('SVC_WEBHOOK_RETRY_MAX_MS', DEFAULT_RETRY_SCHEDULE.maxMs),
    giveUpAfterMs: read('SVC_WEBHOOK_GIVE_UP_HOURS', DEFAULT_RETRY_SCHEDULE.giveUpAfterMs, 3_600_000),
    timeoutMs: read('SVC_WEBHOOK_TIMEOUT_MS', DEFAULT_RETRY_SCHEDULE.timeoutMs),
  };
}
