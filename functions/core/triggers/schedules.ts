import { z } from 'zod';
import { ApiError, badRequest, conflict } from '../common/errors.js';
import { assertItemPath } from '../common/paths.js';
import { parseBody } from '../common/validation.js';
import { withoutWindmillDefaults } from '../common/windmill-only-fields.js';
import { deleteEntity, entityView, type EntityView, listEntityValues, requireEntity, tryCreateEntity, updateEntity, type StoredEntity } from '../store/entities.js';
import { resolveRunTarget } from '../jobs/run-target.js';
import { audit } from '../identity/login-throttle.js';
import { workspaceAnnouncer, type ItemRef } from '../events/announce.js';
import { assertCron, assertTimezone } from './cron.js';
import { authorOf } from './author.js';
import { SCHEDULE_WRITE_RETRY, type Schedule, type ScheduleState } from './schedule-document.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * Schedules (issue 21): a script or flow run on a cron clock with seconds, in a time zone. The
 * document is the truth in both shells; on AWS an EventBridge Scheduler timer per schedule wakes
 * the tick function (deps.timers), locally the ticker reads the documents (schedule-ticks.ts).
 * A schedule runs as the one who last saved it, narrowed as their token was (author.ts).
 */

type Deps = Pick<CoreDeps, 'store' | 'clock' | 'config' | 'timers'>;

const fields = {
  schedule: z.string().min(1).max(200),
  timezone: z.string().min(1).max(100).default('UTC'),
  script_path: z.string(),
  is_flow: z.boolean().default(false),
  args: z.record(z.string(), z.unknown()).default({}),
  enabled: z.boolean().default(true),
  on_failure: z.string().min(1).nullish(),
  on_failure_times: z.number().int().min(1).max(100).default(1),
  on_failure_exact: z.boolean().default(false),
  on_failure_extra_args: z.record(z.string(), z.unknown()).default({}),
  on_recovery: z.string().min(1).nullish(),
  on_recovery_times: z.number().int().min(1).max(100).default(1),
  on_recovery_extra_args: z.record(z.string(), z.unknown()).default({}),
  summary: z.string().max(1000).default(''),
};
export const createBody = z.object({ path: z.string(), ...fields }).strict();
/** An update replaces the schedule whole (as the CLI pushes it); `path` may be repeated, not changed. */
export const updateBody = z.object({ path: z.string().optional(), ...fields }).strict();
export const enabledBody = z.object({ enabled: z.boolean() }).strict();
type Input = z.infer<typeof updateBody>;

const what = (path: string) => `schedule ${path}`;

/**
 * Schedules a workspace may hold. Each one ticks in the local ticker's every pass and, on AWS,
 * is a Scheduler schedule whose sub-minute ticks keep a Lambda running: without a bound one member
 * (or a scheduled script that creates schedules with its job token, doubling them each tick)
 * would slow every workspace's schedules and take the account's Lambda concurrency.
 */
export const MAX_SCHEDULES_PER_WORKSPACE = 1000;

export type ScheduleView = EntityView<'schedule'>;

const view = entityView<'schedule'>;

export async function createSchedule(deps: Deps, rights: Rights, body: unknown): Promise<ScheduleView> {
  const input = parseBody(createBody, withoutWindmillDefaults('schedule', body));
  assertItemPath(input.path);
  rights.check('schedules', 'write', input.path);
  // Counted before the write: creates racing each other may pass the bound by their number, no more.
  if ((await listEntityValues(deps.store, 'schedule', rights.workspaceId)).length >= MAX_SCHEDULES_PER_WORKSPACE) {
    throw new ApiError(409, 'too_many_schedules', `workspace ${rights.workspaceId} has ${MAX_SCHEDULES_PER_WORKSPACE} schedules, the most it may hold: delete one first`, { limit: MAX_SCHEDULES_PER_WORKSPACE });
  }
  const now = deps.clock.now().toISOString();
  const schedule: Schedule = {
    ...(await checkedSchedule(deps, rights, input.path, input)),
    created_by: rights.principal.username,
    last_tick: now,
    last_job: null,
    failure_streak: 0,
    last_failure: null,
    uncounted_runs: [],
    handlers_due: [],
  };
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  const created = await tryCreateEntity(deps.store, deps.clock, 'schedule', rights.workspaceId, input.path, schedule, (e) =>
    announce('CreateSchedule', ref(e)),
  );
  if (!created) throw conflict(`${what(input.path)} already exists`);
  // The schedule before its timer: a timer's first wake-up must find it. A save whose timer
  // cannot be made is undone, so a schedule never exists without its clock.
  try {
    await putTimer(deps, rights.workspaceId, schedule);
  } catch (e) {
    await deps.store.deleteEntity(
      'schedule',
      rights.workspaceId,
      input.path,
      announce('DeleteSchedule', { kind: 'schedule', path: input.path }),
    );
    throw e;
  }
  await audit(deps, 'schedule_created', auditDetail(rights, schedule));
  return view(created);
}

export async function updateSchedule(deps: Deps, rights: Rights, path: string, body: unknown): Promise<ScheduleView> {
  rights.check('schedules', 'write', path);
  const input = parseBody(updateBody, withoutWindmillDefaults('schedule', body));
  if (input.path !== undefined && input.path !== path)
    throw badRequest('invalid_request', 'path: a schedule cannot be moved; delete it and create it at the new path', { field: 'path' });
  await requireEntity(deps.store, 'schedule', rights.workspaceId, path, what(path));
  const checked = await checkedSchedule(deps, rights, path, input);
  const saved = await changeSchedule(deps, rights, path, 'UpdateSchedule', (current) => ({
    ...current,
    ...checked,
    ...restartedClock(deps, current, checked.enabled),
  }));
  await audit(deps, 'schedule_updated', auditDetail(rights, saved.value));
  return view(saved);
}

/** `POST schedules/setenabled/{path}` with `{ enabled }`: the rest of the schedule stays as it is. */
export async function setScheduleEnabled(deps: Deps, rights: Rights, path: string, body: unknown): Promise<ScheduleView> {
  rights.check('schedules', 'write', path);
  const { enabled } = parseBody(enabledBody, body);
  const saved = await changeSchedule(deps, rights, path, 'UpdateSchedule', (current) => ({
    ...current,
    enabled,
    ...restartedClock(deps, current, enabled),
  }));
  await audit(deps, enabled ? 'schedule_enabled' : 'schedule_disabled', auditDetail(rights, saved.value));
  return view(saved);
}

export async function getSchedule(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<ScheduleView> {
  rights.check('schedules', 'read', path);
  return view(await requireEntity(deps.store, 'schedule', rights.workspaceId, path, what(path)));
}

export async function listSchedules(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<ScheduleView[]> {
  rights.check('schedules', 'read');
  return (await listEntityValues(deps.store, 'schedule', rights.workspaceId))
    .filter((e) => rights.can('schedules', 'read', e.key))
    .map(view);
}

export async function deleteSchedule(deps: Deps, rights: Rights, path: string): Promise<void> {
  rights.check('schedules', 'write', path);
  const current = await requireEntity(deps.store, 'schedule', rights.workspaceId, path, what(path));
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  await deleteEntity(deps.store, 'schedule', rights.workspaceId, path, what(path), announce('DeleteSchedule', { kind: 'schedule', path }));
  await deps.timers?.remove(rights.workspaceId, path);
  await audit(deps, 'schedule_deleted', auditDetail(rights, current.value));
}

/**
 * A schedule (re)enabled or changed starts counting from now: the ticks it missed while disabled
 * or under its old expression never run. An unchanged enabled schedule keeps its clock.
 */
function restartedClock(deps: Deps, current: Schedule, enabled: boolean): Pick<Schedule, 'last_tick'> {
  return { last_tick: enabled && current.enabled ? current.last_tick : deps.clock.now().toISOString() };
}

async function changeSchedule(
  deps: Deps,
  rights: Rights,
  path: string,
  type: 'UpdateSchedule',
  change: (current: Schedule) => Schedule,
): Promise<StoredEntity<'schedule'>> {
  const announce = await workspaceAnnouncer(deps, rights.workspaceId, rights.principal.username);
  // Retried on a lost race as the ticker's writes are: the ticker claims each tick and counts
  // each run's outcome on the same document.
  const saved = await updateEntity(deps.store, deps.clock, 'schedule', rights.workspaceId, path, what(path), change, (e) => announce(type, ref(e)), SCHEDULE_WRITE_RETRY);
  await putTimer(deps, rights.workspaceId, saved.value);
  return saved;
}

async function putTimer(deps: Deps, workspaceId: string, s: Schedule): Promise<void> {
  await deps.timers?.put({ workspaceId, path: s.path, schedule: s.schedule, timezone: s.timezone, enabled: s.enabled });
}

/** What the user set, checked as the one saving it: the expression, the zone, the runnables it names. */
async function checkedSchedule(
  deps: Deps,
  rights: Rights,
  path: string,
  input: Input,
): Promise<Omit<Schedule, keyof ScheduleState>> {
  assertTimezone(input.timezone);
  assertCron(input.schedule, input.timezone);
  assertItemPath(input.script_path, 'script_path');
  await assertRunnable(deps, rights, 'script_path', input.script_path, input.is_flow ? 'flow' : 'script');
  if (input.on_failure) {
    assertItemPath(input.on_failure, 'on_failure');
    await assertRunnable(deps, rights, 'on_failure', input.on_failure);
  }
  if (input.on_recovery) {
    assertItemPath(input.on_recovery, 'on_recovery');
    await assertRunnable(deps, rights, 'on_recovery', input.on_recovery);
  }
  return {
    path,
    schedule: input.schedule.trim(),
    timezone: input.timezone,
    script_path: input.script_path,
    is_flow: input.is_flow,
    args: input.args,
    enabled: input.enabled,
    on_failure: input.on_failure ?? null,
    on_failure_times: input.on_failure_times,
    on_failure_exact: input.on_failure_exact,
    on_failure_extra_args: input.on_failure_extra_args,
    on_recovery: input.on_recovery ?? null,
    on_recovery_times: input.on_recovery_times,
    on_recovery_extra_args: input.on_recovery_extra_args,
    summary: input.summary,
    ...authorOf(rights),
  };
}

/** 403 when the saver may not run it, 400 naming the field when there is nothing at the path. */
async function assertRunnable(deps: Deps, rights: Rights, field: string, path: string, only?: 'script' | 'flow'): Promise<void> {
  const target = await resolveRunTarget(deps.store, rights.workspaceId, (p) => rights.can('jobs', 'run', p), {
    by: 'path',
    path,
    ...(only ? { only } : {}),
  });
  if (!target.ok && target.reason === 'forbidden') throw rights.denial('jobs', 'run', target.path);
  if (!target.ok) throw badRequest('invalid_request', `${field}: there is no ${only ?? 'script or flow'} at ${path}`, { field });
}

function ref(e: StoredEntity<'schedule'>): ItemRef {
  return { kind: 'schedule', path: e.key, version: e.version, extra: { script_path: e.value.script_path, enabled: e.value.enabled } };
}

function auditDetail(rights: Rights, s: Schedule): Record<string, unknown> {
  return {
    workspace: rights.workspaceId,
    by: rights.principal.username,
    path: s.path,
    schedule: s.schedule,
    timezone: s.timezone,
    script_path: s.script_path,
    is_flow: s.is_flow,
    enabled: s.enabled,
  };
}
