import { runAllDueTicks } from '../../core/triggers/schedule-ticks.js';
import type { CoreDeps } from '../../core/deps.js';
import { startPeriodic } from './periodic-task.js';

/**
 * The local shell's clock for schedules: every `everyMs` it asks the core to run each schedule's
 * due tick. Which tick runs, and that it runs once across restarts and processes, is decided in
 * the core by a conditional write on the schedule (core/triggers/schedule-ticks.ts).
 */
export function startScheduleTicker(deps: CoreDeps, everyMs: number): { stop(): Promise<void> } {
  // A slow pass (many schedules, a busy disk) is not stacked with the next one (startPeriodic).
  return startPeriodic('schedule ticker', everyMs, async () => {
    await runAllDueTicks(deps, deps.clock.now());
  });
}
