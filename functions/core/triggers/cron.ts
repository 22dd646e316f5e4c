import { Cron } from 'croner';
import { badRequest } from '../common/errors.js';

/**
 * Cron expressions of schedules: six fields, seconds first (`*\/2 * * * * *`), in an IANA time
 * zone, read by croner. Only this module knows the library.
 */

export function assertTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw badRequest('invalid_request', `timezone: ${JSON.stringify(timezone)} is not an IANA time zone (e.g. Europe/Paris, UTC)`, {
      field: 'timezone',
    });
  }
}

function cronOf(expression: string, timezone: string): Cron {
  return new Cron(expression, { timezone, mode: '6-part', paused: true });
}

/** 400 naming the field when the expression is not six valid fields. */
export function assertCron(expression: string, timezone: string): void {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 6) {
    throw badRequest(
      'invalid_request',
      `schedule: ${JSON.stringify(expression)} must have six fields, seconds first (e.g. "0 */5 * * * *")`,
      { field: 'schedule' },
    );
  }
  let next: Date | null;
  try {
    next = cronOf(expression, timezone).nextRun();
  } catch (e) {
    throw badRequest('invalid_request', `schedule: ${JSON.stringify(expression)} is not a valid cron expression: ${(e as Error).message}`, {
      field: 'schedule',
    });
  }
  if (!next) throw badRequest('invalid_request', `schedule: ${JSON.stringify(expression)} never fires`, { field: 'schedule' });
}

/** The latest tick at or before `at`, or null when there is none. */
export function latestTick(expression: string, timezone: string, at: Date): Date | null {
  // croner drops milliseconds and looks strictly before its reference: a second later includes `at`.
  return cronOf(expression, timezone).previousRuns(1, new Date(at.getTime() + 1000))[0] ?? null;
}

/** Every tick in [from, until), in order. */
export function ticksBetween(expression: string, timezone: string, from: Date, until: Date): Date[] {
  const cron = cronOf(expression, timezone);
  const ticks: Date[] = [];
  let next = cron.nextRun(new Date(from.getTime() - 1));
  while (next && next < until) {
    ticks.push(next);
    next = cron.nextRun(next);
  }
  return ticks;
}

/** The first tick strictly after `after`, or null when there is none. */
export function nextTick(expression: string, timezone: string, after: Date): Date | null {
  return cronOf(expression, timezone).nextRun(after);
}
