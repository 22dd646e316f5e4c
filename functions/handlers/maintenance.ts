import type { ScheduledEvent } from 'aws-lambda';
import { sweepTokens } from '../core/token-expiry.js';
import { awsShell } from './aws-deps.js';
import { log } from '../core/logger.js';

/**
 * The maintenance Lambda, on an EventBridge schedule (lib/constructs/maintenance.ts): deletes
 * expired tokens and sends the expiry notices of spec 3 and 5.8, as the local shell's timer does.
 */
export async function handler(_event?: ScheduledEvent): Promise<{ noticed: number; deleted: number }> {
  const { deps } = await awsShell();
  const report = await sweepTokens(deps);
  log.info('token sweep', { ...report });
  return report;
}
