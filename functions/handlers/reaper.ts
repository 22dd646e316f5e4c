import type { ScheduledEvent } from 'aws-lambda';
import { log } from '../core/logger.js';
import { reapStuckJobs } from '../core/runs/stuck-jobs.js';
import { sweepConcurrencySlots } from '../core/concurrency.js';
import { awsShell } from '../shells/aws.js';

/** Jobs failed per status in one pass: a pass takes seconds, the next one comes in minutes. */
const BATCH = 200;

/**
 * The reaper Lambda, on an EventBridge schedule (lib/constructs/job-delivery.ts): fails jobs
 * queued longer than REAP_QUEUED_AFTER_SECONDS and script jobs running longer than
 * REAP_RUNNING_AFTER_SECONDS (the job timeout plus every redelivery the queue would still make).
 * First it lets go of runs waiting for a concurrency slot that a time window freed (core/concurrency.ts);
 * runs still waiting for one are never reaped.
 */
export async function handler(_event?: ScheduledEvent): Promise<{ neverStarted: number; workerLost: number; released: number }> {
  const { deps } = await awsShell();
  // Runs waiting for a concurrency slot that a time window (or a lost worker) freed go on.
  const released = await sweepConcurrencySlots(deps);
  const limits = { queuedMs: seconds('REAP_QUEUED_AFTER_SECONDS') * 1000, runningMs: seconds('REAP_RUNNING_AFTER_SECONDS') * 1000, batch: BATCH };
  const reaped = await reapStuckJobs(deps, limits);
  const report = { neverStarted: reaped.neverStarted.length, workerLost: reaped.workerLost.length, released };
  log.info('reaper pass', report);
  return report;
}

function seconds(name: string): number {
  const value = Number(process.env[name]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive number of seconds, got ${JSON.stringify(process.env[name])}`);
  return value;
}
