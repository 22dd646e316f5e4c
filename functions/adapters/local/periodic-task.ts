import { errorText, log } from '../../core/common/logger.js';

/**
 * Runs `task` now and then every `everyMs` for the local shell's housekeeping (schedule ticks,
 * token sweep, retention prune). A run still going when the next is due is not stacked with
 * another: each task catches up on everything due, so the next tick does the rest. The timer never
 * keeps a stopping process alive (the next start runs the task again); `stop` waits for the run
 * in flight. A failed run is logged under `name` and the next tick tries again.
 */
export function startPeriodic(name: string, everyMs: number, task: () => Promise<void>): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let busy = false;
  const tick = () => {
    if (busy) return;
    busy = true;
    running = task()
      .catch((e) => log.error(`${name} failed`, { error: errorText(e) }))
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
