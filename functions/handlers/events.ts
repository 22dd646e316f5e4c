import type { Context, DynamoDBStreamEvent, ScheduledEvent } from 'aws-lambda';
import { dispatchDue, type DispatchDeps } from '../core/events/dispatcher.js';
import { awsShell, once } from '../shells/aws.js';
import { log } from '../core/common/logger.js';

/**
 * The events Lambda (lib/constructs/events.ts): delivers workspace and instance webhook events.
 * The table's stream invokes it when an outbox item is inserted (filtered to those in the stack,
 * so other writes never start it), which sends new events within moments of the change; an
 * EventBridge schedule invokes it every minute for retries that are due. Either way it works
 * from the outbox items, not from the stream records, so a lost or repeated invocation loses
 * nothing and sends nothing twice on its own account. Near retries (the first ones come within
 * seconds) are waited for here while the invocation has time left.
 */

/** Time kept back from the function's timeout: an attempt under way must end before Lambda stops it. */
const SAFETY_MS = 15_000;
/** How long one invocation stays for near retries at most, whatever its timeout. */
const STAY_MS = 60_000;

const dispatchDeps = once(async (): Promise<DispatchDeps> => {
  const { deps } = await awsShell();
  if (!deps.outbound) throw new Error('the AWS shell has no outbound webhook client');
  return { ...deps, retry: deps.config.webhookRetry, sender: deps.outbound };
});

export async function handler(_event: DynamoDBStreamEvent | ScheduledEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<{ delivered: number; failed: number }> {
  const deps = await dispatchDeps();
  const remaining = context?.getRemainingTimeInMillis() ?? STAY_MS + SAFETY_MS + deps.retry.timeoutMs;
  const leaveBy = Date.now() + Math.min(STAY_MS, remaining - SAFETY_MS - deps.retry.timeoutMs);
  const total = { delivered: 0, failed: 0 };
  for (;;) {
    const report = await dispatchDue(deps);
    total.delivered += report.delivered;
    total.failed += report.failed;
    const next = report.nextDueAt?.getTime();
    if (next === undefined || next > leaveBy) break;
    await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
  }
  if (total.delivered || total.failed) log.info('webhook dispatch', total);
  return total;
}
