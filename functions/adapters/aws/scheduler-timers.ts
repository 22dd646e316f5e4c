import { createHash } from 'node:crypto';
import {
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  UpdateScheduleCommand,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';
import type { ScheduleTimers } from '../../ports.js';

/**
 * Schedules' timers as EventBridge Scheduler schedules, one per svc schedule, in the stack's
 * schedule group. Scheduler's finest clock is a minute, svc's a second: a timer wakes the tick
 * function in each minute that may hold a tick, and the function runs that minute's ticks
 * (handlers/schedule-tick.ts). Which ticks run, and that each runs once, is the core's decision.
 */

export interface SchedulerTimersOptions {
  client: SchedulerClient;
  groupName: string;
  /** The tick function's ARN and the role Scheduler assumes to invoke it. */
  targetArn: string;
  roleArn: string;
}

/** What the tick function receives: Scheduler fills in the time the invocation was due. */
export interface TickEvent {
  workspace_id: string;
  path: string;
  scheduled_time: string;
}

export class SchedulerTimers implements ScheduleTimers {
  constructor(private readonly o: SchedulerTimersOptions) {}

  async put(timer: { workspaceId: string; path: string; schedule: string; timezone: string; enabled: boolean }): Promise<void> {
    const input = {
      Name: timerName(timer.workspaceId, timer.path),
      GroupName: this.o.groupName,
      // Names are hashed (Scheduler allows 64 of [0-9A-Za-z_.-]); the description says whose it is.
      Description: `svc schedule ${timer.path} in workspace ${timer.workspaceId}`.slice(0, 512),
      ScheduleExpression: wakeExpression(timer.schedule),
      ScheduleExpressionTimezone: timer.timezone,
      State: timer.enabled ? ('ENABLED' as const) : ('DISABLED' as const),
      FlexibleTimeWindow: { Mode: 'OFF' as const },
      Target: {
        Arn: this.o.targetArn,
        RoleArn: this.o.roleArn,
        Input: JSON.stringify({
          workspace_id: timer.workspaceId,
          path: timer.path,
          scheduled_time: '<aws.scheduler.scheduled-time>',
        } satisfies TickEvent),
        // A late tick is better run than lost; the claim keeps a retried one from running twice.
        RetryPolicy: { MaximumEventAgeInSeconds: 300, MaximumRetryAttempts: 3 },
      },
    };
    try {
      await this.o.client.send(new UpdateScheduleCommand(input));
    } catch (e) {
      if (!(e instanceof ResourceNotFoundException)) throw e;
      await this.o.client.send(new CreateScheduleCommand(input));
    }
  }

  async remove(workspaceId: string, path: string): Promise<void> {
    try {
      await this.o.client.send(new DeleteScheduleCommand({ Name: timerName(workspaceId, path), GroupName: this.o.groupName }));
    } catch (e) {
      if (!(e instanceof ResourceNotFoundException)) throw e;
    }
  }
}

export function timerName(workspaceId: string, path: string): string {
  return `svc-${createHash('sha256').update(`${workspaceId}\n${path}`).digest('hex').slice(0, 48)}`;
}

/**
 * The Scheduler expression that wakes the tick function in every minute holding a tick of the
 * six-field `schedule`: its minute, hour, day and month fields when Scheduler's cron can say
 * them as they are (then a daily schedule costs one invocation a day), else every minute.
 */
export function wakeExpression(schedule: string): string {
  const [, minute, hour, dayOfMonth, month, dayOfWeek] = schedule.trim().split(/\s+/);
  const plain = (field: string) => /^(\*|\d+(-\d+)?)(\/\d+)?(,(\d+(-\d+)?)(\/\d+)?)*$/.test(field);
  // Scheduler numbers weekdays 1-7 from Sunday and needs `?` in one of the day fields: only a
  // schedule without a weekday is translated; one with a weekday is woken every minute.
  if (dayOfWeek !== '*' || ![minute, hour, dayOfMonth, month].every(plain)) return 'rate(1 minute)';
  // Scheduler writes a step from the start as `0/5` (minutes, hours) or `1/5` (days, months).
  const from = (field: string, first: number) => field.replace(/^\*\//, `${first}/`);
  return `cron(${from(minute, 0)} ${from(hour, 0)} ${from(dayOfMonth, 1)} ${from(month, 1)} ? *)`;
}
