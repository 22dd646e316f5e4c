import { dispatchDue, type DispatchDeps } from '../../core/events/dispatcher.js';
import { errorText, log } from '../../core/common/logger.js';

/**
 * The local shell's webhook dispatcher: a loop beside the API that delivers what the outbox table
 * holds (core/events/dispatcher.ts). It looks for new events every `pollMs`, so a change reaches
 * its webhook within about that long, and a slow or failing receiver holds up only this loop,
 * never a request. Pending deliveries live in the database, so a restart (even kill -9) resumes them.
 */
export function startEventDispatcher(deps: DispatchDeps, pollMs: number): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: () => void = () => {};
  const loop = async () => {
    while (!stopped) {
      let waitMs = pollMs;
      try {
        const report = await dispatchDue(deps);
        if (report.nextDueAt) waitMs = Math.max(0, Math.min(pollMs, report.nextDueAt.getTime() - deps.clock.now().getTime()));
      } catch (e) {
        log.error('webhook dispatch failed', { error: errorText(e) });
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, waitMs);
      });
    }
  };
  const running = loop();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake();
      await running;
    },
  };
}
