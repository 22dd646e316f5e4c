import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SvcStack } from '../../lib/svc-stack.js';
import { arnOf, buildSvcApp, logicalId } from './svc-app.js';

/**
 * Schedules on AWS (issue 21): the api puts one EventBridge Scheduler schedule per svc schedule in
 * the stack's group, with a role Scheduler assumes to invoke the tick function; each may do that
 * and nothing more.
 */

let stack: SvcStack;
let template: Template;
type Statement = { Sid?: string; Action: string | string[]; Resource: unknown; Condition?: Record<string, unknown> };

beforeAll(() => {
  stack = buildSvcApp({ bundle: false }).stack;
  template = Template.fromStack(stack);
});

const resources = () => template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, any> }>;
const statementsOf = (role: Parameters<typeof logicalId>[0]): Statement[] =>
  Object.values(resources())
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: any) => x.Ref === logicalId(role)))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
const actionsOf = (role: Parameters<typeof logicalId>[0]) => statementsOf(role).flatMap((s) => [s.Action].flat());

describe('schedules', () => {
  it('has a schedule group, and a tick function that the api names to Scheduler as each schedule target', () => {
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
    const api = resources()[logicalId(stack.api.handler)].Properties.Environment.Variables;
    expect(api.SCHEDULE_TARGET_ARN).toEqual(arnOf(stack.schedules.handler));
    expect(api.SCHEDULER_ROLE_ARN).toEqual(arnOf(stack.schedules.invokeRole));
    expect(api.SCHEDULE_GROUP_NAME).toBe(stack.schedules.group.scheduleGroupName);
    const tick = resources()[logicalId(stack.schedules.handler)].Properties;
    // A wake-up covers a minute of ticks.
    expect(tick.Timeout).toBeGreaterThan(60);
    expect(tick.Environment.Variables.TABLE_NAME).toBeDefined();
  });

  it('lets Scheduler, from this account and group only, invoke the tick function and nothing else', () => {
    const trust = resources()[logicalId(stack.schedules.invokeRole)].Properties.AssumeRolePolicyDocument.Statement;
    expect(trust).toHaveLength(1);
    expect(trust[0].Principal).toEqual({ Service: 'scheduler.amazonaws.com' });
    expect(Object.keys(trust[0].Condition).sort()).toEqual(['ArnLike', 'StringEquals']);
    expect(trust[0].Condition.StringEquals).toHaveProperty(['aws:SourceAccount']);
    expect(JSON.stringify(trust[0].Condition.ArnLike['aws:SourceArn'])).toContain(`:schedule/${stack.schedules.group.scheduleGroupName}/*`);
    expect([...new Set(actionsOf(stack.schedules.invokeRole))]).toEqual(['lambda:InvokeFunction']);
  });

  it('lets the api manage the group schedules and pass the invoke role to Scheduler, and no other role', () => {
    const manage = statementsOf(stack.api.handler.role!).find((s) => s.Sid === 'ManageSchedules')!;
    expect([manage.Action].flat().sort()).toEqual([
      'scheduler:CreateSchedule',
      'scheduler:DeleteSchedule',
      'scheduler:GetSchedule',
      'scheduler:UpdateSchedule',
    ]);
    expect(JSON.stringify(manage.Resource)).toContain(`:schedule/${stack.schedules.group.scheduleGroupName}/*`);
    const pass = statementsOf(stack.api.handler.role!).filter((s) => [s.Action].flat().includes('iam:PassRole'));
    expect(pass).toEqual([
      {
        Sid: 'PassSchedulerRole',
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: arnOf(stack.schedules.invokeRole),
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      },
    ]);
    // Nobody else touches Scheduler.
    for (const fn of [stack.worker.handler, stack.maintenance.handler, stack.schedules.handler])
      expect(actionsOf(fn.role!).filter((a) => a.startsWith('scheduler:') || a === 'iam:PassRole')).toEqual([]);
  });

  it('gives the tick function the table, the bucket and the signing key, and no queue, KMS or Scheduler rights', () => {
    const actions = actionsOf(stack.schedules.handler.role!);
    expect(actions).toContain('dynamodb:PutItem');
    expect(actions).toContain('secretsmanager:GetSecretValue');
    expect(actions.filter((a) => a.startsWith('sqs:') || a.startsWith('kms:Decrypt') || a.startsWith('scheduler:'))).toEqual([]);
  });
});
