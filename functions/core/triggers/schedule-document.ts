import { z } from 'zod';
import { RACE, type RetryPolicy } from '../common/retry.js';

/**
 * A schedule as stored (`schedule`, keyed by its item path): what the user set, plus the ticker's
 * state. `last_tick` is how a tick is claimed: whoever moves it forward (a conditional write on
 * the document's version) runs that tick, so a restart, a second process or an at-least-once
 * timer delivery never runs a tick twice.
 */
export const scheduleValue = z.object({
  path: z.string().min(1),
  /** Six fields, seconds first (croner syntax). */
  schedule: z.string().min(1),
  timezone: z.string().min(1),
  script_path: z.string().min(1),
  is_flow: z.boolean(),
  args: z.record(z.string(), z.unknown()),
  enabled: z.boolean(),
  /** A script or flow run with `{ schedule_path, path, is_flow, job_id, error }` when a run fails. */
  on_failure: z.string().nullable(),
  /** on_failure runs once this many runs in a row failed (every failure from then on, or, `exact`, only at that count). */
  on_failure_times: z.number().int().min(1).default(1),
  on_failure_exact: z.boolean().default(false),
  /** Passed to on_failure beside what failed. */
  on_failure_extra_args: z.record(z.string(), z.unknown()).default({}),
  /** A script or flow run when a run succeeds after at least `on_recovery_times` failed in a row. */
  on_recovery: z.string().nullable().default(null),
  on_recovery_times: z.number().int().min(1).default(1),
  on_recovery_extra_args: z.record(z.string(), z.unknown()).default({}),
  /** The ticker's count of runs failed in a row, and the last failure (for on_recovery). */
  failure_streak: z.number().int().min(0).default(0),
  last_failure: z.object({ job_id: z.string(), error: z.unknown() }).nullable().default(null),
  summary: z.string(),
  permissioned_as: z.string().min(1),
  permissioned_scopes: z.array(z.string()).nullable(),
  created_by: z.string().min(1),
  /**
   * Runs claimed whose outcome is not counted yet. A run's outcome is stored before it is counted
   * here; a stop between the two leaves the run listed, and the outcome sweep counts it
   * (schedule-handlers.ts). The oldest go past MAX_UNCOUNTED_RUNS.
   */
  uncounted_runs: z.array(z.object({ job_id: z.string().min(1), claimed_at: z.string().min(1) })).default([]),
  /**
   * Handler runs owed: recorded in the write that counts the outcome calling for them, removed once
   * started. Each has its id before it starts, so a start repeated after a stop finds it started.
   * An on_recovery's `success_result` is not copied here (a result may be large): it is read from
   * the run (`job_id`) when the handler starts.
   */
  handlers_due: z
    .array(
      z.object({
        id: z.string().min(1),
        handler: z.string().min(1),
        args: z.record(z.string(), z.unknown()),
        job_id: z.string().min(1),
        due_at: z.string().min(1),
        with_result: z.boolean().default(false),
      }),
    )
    .default([]),
  /** The last tick claimed (or skipped); ticks at or before it never run. */
  last_tick: z.string().min(1),
  /** The job of the last run claimed. */
  last_job: z.string().nullable(),
});
export type Schedule = z.infer<typeof scheduleValue>;

/** The schedule's own bookkeeping, never set by its author: kept as it is across edits. */
export type ScheduleState = Pick<Schedule, 'created_by' | 'last_tick' | 'last_job' | 'failure_streak' | 'last_failure' | 'uncounted_runs' | 'handlers_due'>;

/** Runs listed as uncounted at most (a schedule whose runs overlap that much drops the oldest). */
export const MAX_UNCOUNTED_RUNS = 50;

/**
 * How the writers of a schedule's document retry a lost conditional write: the ticker's claim of a
 * tick (schedule-ticks.ts), the count of a run's outcome (schedule-handlers.ts) and a user's edit
 * (schedules.ts) all write it, so
 * with a schedule every second and a slow store another write often lands between a read and its
 * write. Growing waits (to 100 ms each) over this many attempts outlast such a run of losses; ten
 * quick attempts lost a failure (and its on_failure) on a loaded test machine, three lost ticks.
 */
export const SCHEDULE_WRITE_RETRY: RetryPolicy = { attempts: 60, ...RACE };
