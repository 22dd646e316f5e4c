import { newJobId } from '../common/crypto.js';
import { readEntity, listEntityValues, tryReplaceEntity } from '../store/entities.js';
import { startRun } from '../runs/start-run.js';
import { errorText, log } from '../common/logger.js';
import { AGAIN, retry } from '../common/retry.js';
import { latestTick, nextTick } from './cron.js';
import { resolveHandler } from './handler-run.js';
import { scheduledRunFailed } from './schedule-handlers.js';
import { MAX_UNCOUNTED_RUNS, SCHEDULE_WRITE_RETRY, type Schedule } from './schedule-document.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * Which tick of a schedule runs, and that it runs once: the same rule for the local ticker and
 * the AWS tick function.
 *
 * A tick is claimed by moving the schedule's `last_tick` forward with a conditional write on the
 * document's version; only the writer that wins starts the run. A restart, a second process or a
 * timer delivered twice finds the tick claimed and does nothing.
 *
 * Runs missed while nothing ticked (the process was down): the latest missed tick runs once, as
 * soon as ticking resumes, and the older ones are skipped. This is what the modelled service does
 * (its next run waits in the queue and runs late once), and it keeps a restart from replaying a
 * burst of runs.
 */

/** `jobId` is null when the claimed tick's run could not start (handed to on_failure). */
export type TickOutcome =
  { ran: false; reason: 'disabled' | 'not_due' | 'claimed_elsewhere' | 'gone' } | { ran: true; jobId: string | null; tick: string };

/** Runs the latest tick at or before `now` if nobody ran it yet. */
export async function runDueTick(deps: CoreDeps, workspaceId: string, path: string, now: Date): Promise<TickOutcome> {
  type Claim = { outcome: TickOutcome } | { s: Schedule; tick: Date; jobId: string };
  // A lost claim is read again: the winner may have been another ticker (the tick is then theirs,
  // no longer due) or a write that leaves it due (a user's edit, a run's outcome counted on it).
  const claim = await retry<Claim>({ ...SCHEDULE_WRITE_RETRY, exhausted: () => new Error('unreachable: the last attempt answers') }, async (n) => {
    const current = await readEntity(deps.store, 'schedule', workspaceId, path);
    if (!current) return { outcome: { ran: false, reason: 'gone' } };
    const s = current.value;
    if (!s.enabled) return { outcome: { ran: false, reason: 'disabled' } };
    const tick = latestTick(s.schedule, s.timezone, now);
    if (!tick || tick.getTime() <= Date.parse(s.last_tick)) return { outcome: { ran: false, reason: 'not_due' } };
    const jobId = newJobId();
    // Listed as uncounted in the claim itself when a handler may hear of its outcome: a run whose
    // count a stop prevents is then counted by the outcome sweep. Without handlers a run that
    // succeeds costs no write beyond its claim.
    const tracked = s.on_failure !== null || s.on_recovery !== null;
    const claimed = { job_id: jobId, claimed_at: deps.clock.now().toISOString() };
    const uncounted_runs = tracked ? [...s.uncounted_runs, claimed].slice(-MAX_UNCOUNTED_RUNS) : s.uncounted_runs;
    if (await tryReplaceEntity(deps.store, deps.clock, current, { ...s, last_tick: tick.toISOString(), last_job: jobId, uncounted_runs })) return { s, tick, jobId };
    return n + 1 < SCHEDULE_WRITE_RETRY.attempts ? AGAIN : { outcome: { ran: false, reason: 'claimed_elsewhere' } };
  });
  if ('outcome' in claim) return claim.outcome;
  const { s, tick, jobId } = claim;
  try {
    await startScheduled(deps, workspaceId, s, jobId);
  } catch (e) {
    // The tick is spent either way (at most once); a run that could not even start is a failure.
    log.error('schedule run did not start', { workspace: workspaceId, schedule: path, error: errorText(e) });
    await runOnFailure(deps, workspaceId, s, jobId, { name: 'ScheduleStartError', message: errorText(e) });
    return { ran: true, jobId: null, tick: tick.toISOString() };
  }
  return { ran: true, jobId, tick: tick.toISOString() };
}

/** The local ticker's pass: every enabled schedule of every workspace. */
export async function runAllDueTicks(deps: CoreDeps, now: Date): Promise<number> {
  let ran = 0;
  for (const ws of await deps.store.listWorkspaces()) {
    for (const e of await listEntityValues(deps.store, 'schedule', ws.id)) {
      if (!e.value.enabled) continue;
      try {
        if ((await runDueTick(deps, ws.id, e.key, now)).ran) ran += 1;
      } catch (err) {
        log.error('schedule tick failed', { workspace: ws.id, schedule: e.key, error: errorText(err) });
      }
    }
  }
  return ran;
}

/** The schedule's own run is started as its author, like its handlers (handler-run.ts). */
async function startScheduled(deps: CoreDeps, workspaceId: string, s: Schedule, jobId: string): Promise<Job> {
  const target = await resolveHandler(deps, workspaceId, s, `schedule ${s.path}`, s.script_path, s.is_flow ? 'flow' : 'script');
  if (!target.ok) throw new Error(target.reason);
  return startRun(deps, target.rights, target.runnable, s.args, jobId, { schedule_path: s.path, trigger: 'schedule' });
}


/** A run that could not even start is a failure like any other: it counts, and on_failure may hear of it. */
async function runOnFailure(deps: CoreDeps, workspaceId: string, s: Schedule, jobId: string, error: unknown): Promise<void> {
  await scheduledRunFailed(deps, workspaceId, s.path, jobId, error);
}

/**
 * The AWS tick function's turn: runs the schedule's due ticks from now until `until` (the end of
 * the minute its timer woke it for), sleeping between them, and stops early when the schedule is
 * disabled or gone. Each tick still goes through the claim, so overlapping turns never double it.
 */
export async function runTicksUntil(
  deps: CoreDeps,
  workspaceId: string,
  path: string,
  until: Date,
  sleep: (ms: number) => Promise<void>,
): Promise<string[]> {
  const started: string[] = [];
  for (;;) {
    const now = deps.clock.now();
    const outcome = await runDueTick(deps, workspaceId, path, now);
    if (outcome.ran) {
      if (outcome.jobId) started.push(outcome.jobId);
    } else if (outcome.reason === 'disabled' || outcome.reason === 'gone') {
      return started;
    }
    const s = await readEntity(deps.store, 'schedule', workspaceId, path);
    const next = s && nextTick(s.value.schedule, s.value.timezone, now);
    if (!next || next >= until) return started;
    await sleep(next.getTime() - deps.clock.now().getTime());
  }
}
