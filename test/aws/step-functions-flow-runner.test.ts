import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendTaskSuccessCommand, StartExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { executionName, StepFunctionsFlowRunner } from '../../functions/adapters/aws/step-functions-flow-runner.js';
import { SqliteStore } from '../../functions/adapters/local/sqlite-store.js';
import { aJob, uid } from '../contract/store-fixtures.js';

/**
 * The flow runner's waiting protocol, step by step: a wake must never be lost between a turn of the
 * interpreter and the parking of the waiting state's token. The Step Functions client here records
 * what it is asked (and can answer as Step Functions does to a task that already ended); the store
 * is a real one (SQLite: the Store contract suite holds DynamoDB to the same behaviour).
 */

type Sent = { name: string; input: Record<string, unknown> };

let dir: string;
let store: SqliteStore;
let sent: Sent[];
/** The error name Step Functions answers SendTaskSuccess with, if any. */
let refuseTasksWith: string | null;

function runner(stateMachineArn: string | null = 'arn:aws:states:us-east-1:000000000000:stateMachine:svc-dev-flow-runner'): StepFunctionsFlowRunner {
  const client = {
    send: async (command: SendTaskSuccessCommand | StartExecutionCommand) => {
      sent.push({ name: command.constructor.name, input: command.input as unknown as Record<string, unknown> });
      if (command instanceof SendTaskSuccessCommand && refuseTasksWith) throw Object.assign(new Error('no such task'), { name: refuseTasksWith });
      if (command instanceof StartExecutionCommand && command.input.name?.startsWith('done')) throw Object.assign(new Error('exists'), { name: 'ExecutionAlreadyExists' });
      return {};
    },
  } as unknown as SFNClient;
  return new StepFunctionsFlowRunner({ client, stateMachineArn, store, clock: { now: () => new Date() } });
}

const completed = () => sent.filter((c) => c.name === 'SendTaskSuccessCommand').map((c) => c.input.taskToken);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-flow-runner-'));
  store = new SqliteStore(join(dir, 'svc.db'));
  sent = [];
  refuseTasksWith = null;
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('StepFunctionsFlowRunner', () => {
  it('completes the parked token when the flow is woken, once', async () => {
    const r = runner();
    const ws = uid('ws');
    const seen = await r.beginTurn(ws, 'flow-1');
    await r.park(ws, 'flow-1', 'token-A', seen);
    expect(completed()).toEqual([]);
    await r.wake(ws, 'flow-1');
    expect(completed()).toEqual(['token-A']);
    // The token is used up: a second wake has nothing to complete.
    await r.wake(ws, 'flow-1');
    expect(completed()).toEqual(['token-A']);
  });

  it('does not park when a wake came after the turn began: the execution goes straight on', async () => {
    const r = runner();
    const ws = uid('ws');
    const seen = await r.beginTurn(ws, 'flow-1');
    // A resume lands while the turn runs, before the waiting state parks its token.
    await r.wake(ws, 'flow-1');
    await r.park(ws, 'flow-1', 'token-B', seen);
    expect(completed()).toEqual(['token-B']);
    // The next turn sees the new count and may park.
    const next = await r.beginTurn(ws, 'flow-1');
    expect(next).toBe(seen + 1);
    await r.park(ws, 'flow-1', 'token-C', next);
    expect(completed()).toEqual(['token-B']);
  });

  it('leaves no record for wakes of a flow that is not running, and lets a late park go on at once', async () => {
    const r = runner();
    const ws = uid('ws');
    await r.wake(ws, 'never-started');
    expect(await store.getEntity('flow_wait', ws, 'never-started')).toBeNull();

    const seen = await r.beginTurn(ws, 'flow-2');
    await r.endRun(ws, 'flow-2');
    await r.park(ws, 'flow-2', 'token-D', seen);
    expect(completed()).toEqual(['token-D']);
  });

  it('takes a refusal for a task that already ended in its stride, and passes on other errors', async () => {
    const r = runner();
    for (const name of ['TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken']) {
      refuseTasksWith = name;
      await expect(r.completeTask('old-token')).resolves.toBeUndefined();
    }
    refuseTasksWith = 'ThrottlingException';
    await expect(r.completeTask('old-token')).rejects.toThrow('no such task');
  });

  it('starts one execution per flow job, named after its path and id, and tolerates a repeat', async () => {
    const r = runner();
    const job = aJob('ws1', { kind: 'flow', script_path: 'f/ops/deploy prod' });
    await r.start(job);
    expect(sent[0]).toMatchObject({
      name: 'StartExecutionCommand',
      input: { name: `f_ops_deploy_prod-${job.id}`, input: JSON.stringify({ workspaceId: 'ws1', flowJobId: job.id, events: 0 }) },
    });
    await expect(r.start(aJob('ws1', { kind: 'flow', script_path: 'done' }))).resolves.toBeUndefined();
    await expect(runner(null).start(job)).rejects.toThrow(/STATE_MACHINE_ARN/);
  });

  it('keeps execution names within 80 characters, ending with the whole job id', () => {
    const id = '0d9c1a5e-2f7b-4c1e-9a63-5b8f0e7d4c21';
    const name = executionName(`f/${'very_long_folder_name/'.repeat(6)}flow`, id);
    expect(name.length).toBeLessThanOrEqual(80);
    expect(name.endsWith(`_flow-${id}`)).toBe(true);
    expect(name).toMatch(/^[A-Za-z0-9_.-]+$/);
  });
});
