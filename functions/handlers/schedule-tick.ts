import { runTicksUntil } from '../core/triggers/schedule-ticks.js';
import { log } from '../core/common/logger.js';
import type { TickEvent } from '../adapters/aws/scheduler-timers.js';
import type { CoreDeps } from '../core/deps.js';
import { awsShell } from '../shells/aws.js';

/**
 * The schedule tick function, invoked by a schedule's EventBridge Scheduler timer
 * (adapters/aws/scheduler-timers.ts, lib/constructs/schedules.ts) in each minute that may hold a
 * tick: it runs that minute's ticks, each claimed in DynamoDB by the core so a retried or
 * overlapping invocation never runs one twice.
 */

/** One wake-up covers the minute it was due for. */
const WINDOW_MS = 60_000;

export function createScheduleTickHandler(
  depsOf: () => Promise<CoreDeps>,
  opts: { windowMs?: number; sleep?: (ms: number) => Promise<void> } = {},
) {
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms))));
  return async (event: TickEvent): Promise<{ started: string[] }> => {
    const deps = await depsOf();
    const due = Date.parse(event.scheduled_time);
    const from = Number.isFinite(due) ? due : deps.clock.now().getTime();
    const started = await runTicksUntil(deps, event.workspace_id, event.path, new Date(from + (opts.windowMs ?? WINDOW_MS)), sleep);
    if (started.length > 0) log.info('schedule ticks run', { workspace: event.workspace_id, schedule: event.path, jobs: started.length });
    return { started };
  };
}

export const handler = createScheduleTickHandler(async () => (await awsShell()).deps);
