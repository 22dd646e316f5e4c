import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { DynamoStore } from '../../functions/adapters/aws/dynamo-store.js';
import { TableStreamJobQueue } from '../../functions/adapters/aws/job-outbox.js';
import { SchedulerTimers, wakeExpression } from '../../functions/adapters/aws/scheduler-timers.js';
import { createMemoryService } from '../../functions/shells/memory.js';
import { bootstrapInstance } from '../../functions/core/identity/bootstrap.js';
import { Rights } from '../../functions/core/identity/permissions.js';
import { createSchedule, deleteSchedule, setScheduleEnabled, updateSchedule } from '../../functions/core/triggers/schedules.js';
import { createScheduleTickHandler } from '../../functions/handlers/schedule-tick.js';
import type { CoreDeps } from '../../functions/core/deps.js';
import { aScriptVersion } from '../contract/store-fixtures.js';
import { createTestTable, dynamoClient, type DynamoEndpoint } from './dynamodb-local.js';
import { testDynamoDb } from './shared-emulator-endpoints.js';
import { EMULATOR_CREDENTIALS, EMULATOR_REGION } from './emulator-endpoints.js';
import { startLocalScheduler, type LocalScheduler } from './scheduler-local.js';

/**
 * Schedules on AWS (issue 21): saving a schedule puts an EventBridge Scheduler schedule through
 * the real SDK client (checked at the request level against a loopback stand-in speaking
 * Scheduler's wire format), and the tick function, invoked as Scheduler invokes it with the
 * target input it was given, claims each tick in DynamoDB Local so a retried or overlapping
 * invocation never runs one twice.
 */

const GROUP = 'svc-schedules';
const TARGET = 'arn:aws:lambda:us-east-1:000000000000:function:svc-schedule-tick';
const ROLE = 'arn:aws:iam::000000000000:role/svc-scheduler';

let dynamo: DynamoEndpoint;
let table: Awaited<ReturnType<typeof createTestTable>> | undefined;
let client: DynamoDBClient;
let scheduler: LocalScheduler;
let schedulerClient: SchedulerClient;
let deps: CoreDeps;
let rights: Rights;

beforeAll(async () => {
  [dynamo, scheduler] = await Promise.all([testDynamoDb(), startLocalScheduler()]);
  client = dynamoClient(dynamo.endpoint);
  table = await createTestTable(client);
  const { tableName } = table;
  schedulerClient = new SchedulerClient({ endpoint: scheduler.endpoint, region: EMULATOR_REGION, credentials: EMULATOR_CREDENTIALS });
  const store = new DynamoStore({ client, tableName });
  const clock = { now: () => new Date() };
  // The core's other ports as in memory; the store, the queue and the timers are the AWS ones.
  const memory = await createMemoryService({
    runner: { run: async () => ({ ok: true, result: null }) } as never,
    clock,
    adminToken: 'unused',
  });
  deps = {
    ...memory.deps,
    store,
    queue: new TableStreamJobQueue(),
    timers: new SchedulerTimers({ client: schedulerClient, groupName: GROUP, targetArn: TARGET, roleArn: ROLE }),
  };
  await bootstrapInstance(store, clock, {
    adminToken: `admin-${randomBytes(8).toString('hex')}`,
    defaultWorkspaceId: 'main',
    signingKey: randomBytes(32),
  });
  await store.insertScriptVersion(aScriptVersion('main', 'f/ops/report'), null);
  const admin = (await store.getUser('admin'))!;
  rights = await Rights.load(
    deps,
    { username: admin.username, isSuperadmin: true, workspaceId: 'main', scopes: null, via: 'token', jobId: null, tokenHash: null },
    'main',
  );
}, 120_000);

afterAll(async () => {
  // The run's DynamoDB Local outlives this file.
  await table?.drop();
  client?.destroy();
  schedulerClient?.destroy();
  await Promise.all([dynamo?.stop(), scheduler?.stop()]);
});

/** Scheduler's invocation: the target input with its context attribute filled in. */
function invocationOf(path: string, scheduledTime: Date) {
  const timer = [...scheduler.schedules.values()].find((t) => JSON.parse(t.Target.Input!).path === path)!;
  return JSON.parse(timer.Target.Input!.replace('<aws.scheduler.scheduled-time>', scheduledTime.toISOString()));
}

const jobsOf = (path: string) => deps.store.listJobs({ workspace_id: 'main', schedule_path: path, limit: 1000 });

describe('schedules on AWS', () => {
  it('creates, updates, disables and deletes the EventBridge Scheduler schedule with the item', async () => {
    await createSchedule(deps, rights, {
      path: 'f/ops/nightly',
      schedule: '0 30 4 * * *',
      timezone: 'Europe/Paris',
      script_path: 'f/ops/report',
      args: { b: 1 },
    });
    // Update first (the usual case), then Create when there is none yet.
    expect(scheduler.requests.map((r) => r.method)).toEqual(['PUT', 'POST']);
    const [timer] = scheduler.schedules.values();
    expect(timer).toMatchObject({
      GroupName: GROUP,
      ScheduleExpression: 'cron(30 4 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Paris',
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: TARGET, RoleArn: ROLE },
    });
    expect(timer.Name).toMatch(/^svc-[0-9a-f]{48}$/);
    expect(JSON.parse(timer.Target.Input!)).toEqual({
      workspace_id: 'main',
      path: 'f/ops/nightly',
      scheduled_time: '<aws.scheduler.scheduled-time>',
    });

    await updateSchedule(deps, rights, 'f/ops/nightly', {
      schedule: '*/2 * * * * *',
      timezone: 'UTC',
      script_path: 'f/ops/report',
      args: { b: 2 },
    });
    expect(scheduler.schedules.get(`${GROUP}/${timer.Name}`)).toMatchObject({
      ScheduleExpression: 'cron(* * * * ? *)',
      ScheduleExpressionTimezone: 'UTC',
      State: 'ENABLED',
    });
    await setScheduleEnabled(deps, rights, 'f/ops/nightly', { enabled: false });
    expect(scheduler.schedules.get(`${GROUP}/${timer.Name}`)?.State).toBe('DISABLED');

    await deleteSchedule(deps, rights, 'f/ops/nightly');
    expect(scheduler.schedules.size).toBe(0);
    expect(scheduler.requests.at(-1)).toMatchObject({ method: 'DELETE', query: { groupName: GROUP } });
    // A timer already gone is not an error: deleting is what was wanted.
    await expect(deps.timers!.remove('main', 'f/ops/nightly')).resolves.toBeUndefined();
  });

  it('runs each tick of the woken minute once, even when Scheduler delivers the invocation twice, and nothing once disabled', async () => {
    await createSchedule(deps, rights, { path: 'f/ops/every2s', schedule: '*/2 * * * * *', script_path: 'f/ops/report', args: { b: 3 } });
    const due = new Date();
    const handler = createScheduleTickHandler(async () => deps, { windowMs: 5000 });
    // The same wake-up twice at once (at-least-once delivery, a retry after a timeout).
    const [a, b] = await Promise.all([handler(invocationOf('f/ops/every2s', due)), handler(invocationOf('f/ops/every2s', due))]);
    const started = [...a.started, ...b.started];
    expect(new Set(started).size).toBe(started.length);
    const jobs = await jobsOf('f/ops/every2s');
    expect(jobs.map((j) => j.id).sort()).toEqual([...started].sort());
    // A 5 s window of a 2 s schedule holds two or three ticks; each ran once.
    expect(jobs.length).toBeGreaterThanOrEqual(2);
    expect(jobs.length).toBeLessThanOrEqual(3);
    expect(jobs.every((j) => j.schedule_path === 'f/ops/every2s' && j.script_path === 'f/ops/report' && j.created_by === 'admin')).toBe(
      true,
    );
    const ticks = jobs.map((j) => Math.floor(Date.parse(j.created_at) / 2000));
    expect(new Set(ticks).size).toBe(ticks.length);

    await setScheduleEnabled(deps, rights, 'f/ops/every2s', { enabled: false });
    expect(await handler({ workspace_id: 'main', path: 'f/ops/every2s', scheduled_time: new Date().toISOString() })).toEqual({
      started: [],
    });
    expect((await jobsOf('f/ops/every2s')).length).toBe(jobs.length);
    await deleteSchedule(deps, rights, 'f/ops/every2s');
  }, 30_000);

  it('wakes only the minutes a schedule can fire in when Scheduler can say so', () => {
    expect(wakeExpression('0 0 3 * * *')).toBe('cron(0 3 * * ? *)');
    expect(wakeExpression('15 */5 * * * *')).toBe('cron(0/5 * * * ? *)');
    expect(wakeExpression('0 0 9 1,15 * *')).toBe('cron(0 9 1,15 * ? *)');
    expect(wakeExpression('0 0 9 * * MON-FRI')).toBe('rate(1 minute)');
    expect(wakeExpression('0 0 9 L * *')).toBe('rate(1 minute)');
  });
});
