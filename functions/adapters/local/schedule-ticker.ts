import { runAllDueTicks } from '../../core/triggers/schedule-ticks.js';
import { errorText, log } from '../../core/logger.js';
import type { CoreDeps } from '../../core/deps.js';

/**
 * The local shell's clock for schedules: every `everyMs` it asks the core to run each schedule's
 * due tick. Which tick runs, and that it runs once across restarts and processes, is decided in
 * the core by a conditional write on the schedule (core/triggers/schedule-ticks.ts).
 */
export function startScheduleTicker(deps: CoreDeps, everyMs: number): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let busy = false;
  const tick = () => {
    // A slow pass (many schedules, a busy disk) is not stacked with the next one.
    if (busy) return;
    busy = true;
    running = runAllDueTicks(deps, deps.clock.now())
      .then(() => undefined)
      .catch((e) => log.error('schedule ticker failed', { error: errorText(e) }))
      .finally(() => {
        busy = false;
      });
  };
  tick();
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
