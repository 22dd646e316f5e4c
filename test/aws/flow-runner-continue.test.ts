import { describe, expect, it } from 'vitest';
import { DescribeExecutionCommand, GetExecutionHistoryCommand, ListExecutionsCommand, type SFNClient, type ExecutionListItem } from '@aws-sdk/client-sfn';
import { waitForJob, type TestServer } from '../http/harness.js';
import { createFlowIn, ts, useFlowRunnerServer } from './flow-runner-server.js';

/**
 * Flows that outgrow one Step Functions execution: a Standard execution ends at 25,000 history
 * events or one year, so the flow runner hands a flow over to a new execution of the same job
 * before either (continue-as-new). The AWS shell on this machine runs here with both budgets
 * shrunk (40 events, 4 seconds) and the daily look of a waiting flow shortened to a second, so
 * a 12-step flow and an approval waiting "past a year" both cross several executions.
 */

let s: TestServer;
let sfn: SFNClient;
let stateMachineArn: string;

// Every step through the worker (a hand-over and RunScriptStep, 15 events each), so a sequential flow's history grows:
// plain steps run inside Advance add none (flow-runner.test.ts).
useFlowRunnerServer({ SVC_FLOW_INLINE_STEPS: 'false', SVC_TEST_FLOW_EVENT_BUDGET: '40', SVC_TEST_FLOW_AGE_BUDGET_SECONDS: '4', SVC_TEST_FLOW_WAKE_CHECK_SECONDS: '1' }, (started) => ({ s, sfn, stateMachineArn } = started));

const ws = () => `/api/w/${s.workspace}`;

const createFlow = (path: string, modules: unknown[]) => createFlowIn(s, path, modules);

/** Every execution of the flow job, in the order of their continuation numbers. */
async function executionsOf(jobId: string): Promise<ExecutionListItem[]> {
  const { executions } = await sfn.send(new ListExecutionsCommand({ stateMachineArn }));
  const continuation = (name: string) => Number(/\.c(\d+)$/.exec(name)?.[1] ?? 0);
  return (executions ?? []).filter((e) => e.name!.includes(jobId)).sort((a, b) => continuation(a.name!) - continuation(b.name!));
}

async function statesEntered(executionArn: string): Promise<string[]> {
  const { events } = await sfn.send(new GetExecutionHistoryCommand({ executionArn }));
  return (events ?? []).flatMap((e) => (e.stateEnteredEventDetails ? [e.stateEnteredEventDetails.name ?? ''] : []));
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const found = await probe();
    if (found !== undefined) return found;
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('a flow that outgrows its execution', () => {
  it('continues as a new execution before the history budget is spent, and finishes with the right result', async () => {
    const steps = Array.from({ length: 12 }, (_, i) => ({
      id: `s${i}`,
      value: { type: 'rawscript', language: 'bun', content: 'export function main(x: number) { return x + 1 }', input_transforms: { x: { type: 'javascript', expr: i === 0 ? '0' : 'previous_result' } } },
    }));
    await createFlow('u/admin/long_flow', steps);
    const id = await (await s.post(`${ws()}/jobs/run/p/u/admin/long_flow`, {})).text();
    // Twelve jobs one after another: patient on a busy machine.
    expect((await waitForJob(s, id, 90_000)).result).toBe(12);

    const executions = await until('the last execution to end', async () => {
      const all = await executionsOf(id);
      return all.length > 0 && all.every((e) => e.status !== 'RUNNING') ? all : undefined;
    });
    // 15 events per step against a budget of 40: a new execution every few steps.
    expect(executions.length).toBeGreaterThanOrEqual(4);
    expect(executions.map((e) => e.name)).toEqual(executions.map((_, n) => `u_admin_long_flow-${id}${n === 0 ? '' : `.c${n}`}`));
    for (const e of executions.slice(0, -1)) {
      expect(e.status).toBe('SUCCEEDED');
      expect((await statesEntered(e.executionArn!)).slice(-2)).toEqual(['Advance', 'Continued']);
    }
    // The last execution ends with the Advance that finds the flow done.
    const last = executions.at(-1)!;
    expect(last.status).toBe('SUCCEEDED');
    expect((await statesEntered(last.executionArn!)).at(-1)).toBe('Advance');
    // Every step ran once across the executions: one RunScriptStep each.
    const ran = (await Promise.all(executions.map((e) => statesEntered(e.executionArn!)))).flat().filter((n) => n === 'RunScriptStep');
    expect(ran).toHaveLength(12);
  }, 120_000);

  it('keeps a flow waiting without a deadline across executions, and a resume still reaches it', async () => {
    const ask = `import * as svc from 'svc-client';\nexport async function main() { return await svc.getResumeUrls('ops') }`;
    await createFlow('u/admin/long_wait', [ts('ask', ask, { suspend: { required_events: 1 } }), ts('after', 'export function main() { return "approved" }')]);
    const id = await (await s.post(`${ws()}/jobs/run/p/u/admin/long_wait`, {})).text();
    const job = await until('the flow to suspend', async () => {
      const j = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
      return j.status === 'suspended' ? j : undefined;
    });
    // The wait outlives its execution's age budget more than once ("a year" here is 4 s).
    const waiting = await until('a second continuation', async () => {
      const all = await executionsOf(id);
      return all.length >= 3 ? all : undefined;
    });
    expect(waiting[0].name).toBe(`u_admin_long_wait-${id}`);
    expect((await sfn.send(new DescribeExecutionCommand({ executionArn: waiting[0].executionArn }))).status).toBe('SUCCEEDED');
    expect((await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).status).toBe('suspended');

    const resume = new URL(job.flow_status.results.ask.resume);
    expect((await s.fetch(resume.pathname + resume.search, { method: 'POST', token: null })).status).toBe(200);
    expect((await waitForJob(s, id)).result).toBe('approved');
    const all = await until('the last execution to end', async () => {
      const found = await executionsOf(id);
      return found.every((e) => e.status !== 'RUNNING') ? found : undefined;
    });
    expect(all.at(-1)!.status).toBe('SUCCEEDED');
    expect((await statesEntered(all.at(-1)!.executionArn!)).at(-1)).toBe('Advance');
    expect(all.slice(0, -1).every((e) => e.status === 'SUCCEEDED')).toBe(true);
  }, 90_000);
});
