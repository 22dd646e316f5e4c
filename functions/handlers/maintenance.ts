import type { ScheduledEvent } from 'aws-lambda';
import { sweepTokens } from '../core/identity/token-expiry.js';
import { runsWithPendingNotices } from '../core/flows/timers.js';
import { awsShell } from '../shells/aws.js';
import { log } from '../core/common/logger.js';
import { pruneFinishedJobs } from '../core/console/retention.js';
import { pruneExpiredResults } from '../core/jobs/result-cache.js';

/**
 * The maintenance Lambda, on an EventBridge schedule (lib/constructs/maintenance.ts): deletes
 * expired tokens and sends the expiry notices of spec 3 and 5.8, as the local shell's timer does,
 * and wakes every flow at a ConsentGate whose notices a crashed turn left unsent (the local shell
 * does this when it starts): the flow's next Advance sends them. It also prunes finished jobs past
 * their workspace's retention (core/console/retention.ts), and expired entries of the result cache.
 */
export async function handler(_event?: ScheduledEvent): Promise<{ noticed: number; deleted: number; woken: number; scrubbed: number }> {
  const { deps } = await awsShell();
  const report = await sweepTokens(deps);
  log.info('token sweep', { ...report });
  const unsent = await runsWithPendingNotices(deps);
  for (const { workspaceId, flowJobId } of unsent) await deps.flows.wake(workspaceId, flowJobId);
  if (unsent.length > 0) log.info('woke flows with unsent gate notices', { count: unsent.length });
  // Finished jobs past their workspace's retention lose their payloads, a bounded chunk per run.
  const pruned = await pruneFinishedJobs(deps);
  if (pruned.scrubbed > 0) log.info('retention prune', { ...pruned });
  // Expired results of the result cache (cache_ttl) are removed, a bounded number per run.
  const expired = await pruneExpiredResults(deps);
  if (expired > 0) log.info('result cache prune', { expired });
  return { ...report, woken: unsent.length, ...pruned };
}
