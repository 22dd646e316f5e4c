import { describe, expect, it } from 'vitest';
import { DescribeExecutionCommand, GetExecutionHistoryCommand, ListExecutionsCommand, type SFNClient, type DescribeExecutionCommandOutput } from '@aws-sdk/client-sfn';
import { waitForJob, type TestServer } from '../http/harness.js';
import { createFlowIn, ts, useFlowRunnerServer } from './flow-runner-server.js';

/**
 * Flows on Step Functions, looked at as an operator would in the console: the AWS shell on this
 * machine (aws-shell-server.ts) runs the flow-runner state machine on the emulator, and this test
 * drives flows over the HTTP API while reading executions through the Step Functions API.
 */

let s: TestServer;
let sfn: SFNClient;
let stateMachineArn: string;

useFlowRunnerServer(undefined, (started) => ({ s, sfn, stateMachineArn } = started));

const ws = () => `/api/w/${s.workspace}`;

const createFlow = (path: string, modules: unknown[]) => createFlowIn(s, path, modules);

async function runFlow(path: string, args: unknown = {}): Promise<string> {
  return (await s.post(`${ws()}/jobs/run/p/${path}`, args)).text();
}

/** The execution whose name ends with the job id (names are `<flow path>-<job id>`). */
async function executionOf(jobId: string): Promise<{ executionArn: string; name: string }> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const { executions } = await sfn.send(new ListExecutionsCommand({ stateMachineArn }));
    const found = executions?.find((e) => e.name?.endsWith(jobId));
    if (found) return { executionArn: found.executionArn!, name: found.name! };
  }
  throw new Error(`no execution for job ${jobId}`);
}

async function finished(executionArn: string): Promise<DescribeExecutionCommandOutput> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    if (execution.status !== 'RUNNING') return execution;
  }
  throw new Error(`execution ${executionArn} still running`);
}

/** What each Advance answered, in order (the console shows it as the state's output). */
async function advanceOutputs(executionArn: string): Promise<Array<Record<string, unknown>>> {
  const { events } = await sfn.send(new GetExecutionHistoryCommand({ executionArn }));
  return (events ?? []).filter((e) => e.stateExitedEventDetails?.name === 'Advance').map((e) => JSON.parse(e.stateExitedEventDetails?.output ?? '{}') as Record<string, unknown>);
}

async function statesEntered(executionArn: string): Promise<string[]> {
  const { events } = await sfn.send(new GetExecutionHistoryCommand({ executionArn }));
  return (events ?? []).flatMap((e) => (e.stateEnteredEventDetails ? [e.stateEnteredEventDetails.name ?? ''] : []));
}

describe('the flow-runner state machine', () => {
  it('runs each flow job as one execution named after the flow and the job, its plain steps inside Advance', async () => {
    await createFlow('u/admin/sfn_steps', [ts('one', 'export function main() { return 1 }'), { id: 'two', value: { type: 'rawscript', language: 'python3', content: 'def main(x: int):\n    return x + 1\n', input_transforms: { x: { type: 'javascript', expr: 'previous_result' } } } }]);
    const id = await runFlow('u/admin/sfn_steps');
    expect((await waitForJob(s, id)).result).toBe(2);

    const { executionArn, name } = await executionOf(id);
    expect(name).toBe(`u_admin_sfn_steps-${id}`);
    expect((await finished(executionArn)).status).toBe('SUCCEEDED');
    expect(await statesEntered(executionArn)).toEqual(['Advance']);
    // The console names the steps in Advance's output.
    expect(await advanceOutputs(executionArn)).toEqual([expect.objectContaining({ ran: [expect.objectContaining({ step: 'one' }), expect.objectContaining({ step: 'two' })], ranCount: 2 })]);
  });

  it('takes one state transition for a 10-step flow of plain steps, counted from the execution history', async () => {
    const steps = Array.from({ length: 10 }, (_, i) =>
      ({ id: `s${i}`, value: { type: 'rawscript', language: 'bun', content: 'export function main(x: number) { return x + 1 }', input_transforms: { x: { type: 'javascript', expr: i === 0 ? '0' : 'previous_result' } } } }),
    );
    await createFlow('u/admin/sfn_ten', steps);
    const id = await runFlow('u/admin/sfn_ten');
    // Ten jobs one after another: patient on a busy machine.
    expect((await waitForJob(s, id, 90_000)).result).toBe(10);

    const { executionArn } = await executionOf(id);
    expect((await finished(executionArn)).status).toBe('SUCCEEDED');
    // Step Functions bills every state entered (docs/aws.md "Costs"): one Advance runs the ten
    // steps and, the flow done, ends the execution.
    const states = await statesEntered(executionArn);
    expect(states).toEqual(['Advance']);
    expect((await advanceOutputs(executionArn))[0]).toMatchObject({ ranCount: 10, ran: steps.map((m) => expect.objectContaining({ step: m.id })) });
  }, 120_000);

  it('runs sub-flows and loop iterations as child executions of the same state machine', async () => {
    await createFlow('u/admin/sfn_child', [ts('c', 'export function main() { return "child" }')]);
    await createFlow('u/admin/sfn_parent', [
      { id: 'loop', value: { type: 'forloopflow', iterator: { type: 'static', value: [1, 2] }, parallel: true, modules: [ts('i', 'export function main() { return "it" }')] } },
      { id: 'sub', value: { type: 'flow', path: 'u/admin/sfn_child', input_transforms: {} } },
    ]);
    const id = await runFlow('u/admin/sfn_parent');
    expect((await waitForJob(s, id)).result).toBe('child');

    const parent = await executionOf(id);
    expect((await finished(parent.executionArn)).status).toBe('SUCCEEDED');
    expect((await statesEntered(parent.executionArn)).filter((n) => n === 'RunSubFlow')).toHaveLength(3);
    const jobs: { id: string; parent_job: string; job_kind: string; script_path: string }[] = await (await s.fetch(`${ws()}/jobs/list?per_page=100`)).json();
    const children = jobs.filter((j) => j.parent_job === id && j.job_kind === 'flow');
    expect(children.map((j) => j.script_path).sort()).toEqual(['u/admin/sfn_child', 'u/admin/sfn_parent/loop', 'u/admin/sfn_parent/loop']);
    for (const child of children) {
      const execution = await executionOf(child.id);
      expect(execution.name).toBe(`${child.script_path.replaceAll('/', '_')}-${child.id}`);
      expect((await finished(execution.executionArn)).status).toBe('SUCCEEDED');
    }
  });

  it('parks a suspended flow until a resume URL wakes it', async () => {
    const ask = `import * as svc from 'svc-client';\nexport async function main() { return await svc.getResumeUrls('ops') }`;
    await createFlow('u/admin/sfn_approval', [ts('ask', ask, { suspend: { required_events: 1 } }), ts('after', 'export function main() { return "approved" }')]);
    const id = await runFlow('u/admin/sfn_approval');
    let job: Record<string, any> = {};
    for (const deadline = Date.now() + 20_000; job.status !== 'suspended' && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    }
    expect(job.status).toBe('suspended');
    const { executionArn } = await executionOf(id);
    // Waiting on its parked token, with no deadline: a task token is never part of a resume URL.
    for (let i = 0; i < 50 && (await statesEntered(executionArn)).at(-1) !== 'WaitForWake'; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await statesEntered(executionArn)).at(-1)).toBe('WaitForWake');
    expect((await sfn.send(new DescribeExecutionCommand({ executionArn }))).status).toBe('RUNNING');

    const resume = new URL(job.flow_status.results.ask.resume);
    expect((await s.fetch(resume.pathname + resume.search, { method: 'POST', token: null })).status).toBe(200);
    expect((await waitForJob(s, id)).result).toBe('approved');
    expect((await finished(executionArn)).status).toBe('SUCCEEDED');
    // docs/aws.md "Costs": a step, an approval and a step are five transitions. The first Advance
    // runs `ask` and hands over to the wait; the one the resume wakes runs `after` and ends.
    expect(await statesEntered(executionArn)).toEqual(['Advance', 'WaitForWakeCause', 'WaitForWakeTurn', 'WaitForWake', 'Advance']);
  });

  it('runs each iteration of a sequential loop as a child execution: seven transitions an iteration, one of them the child\'s', async () => {
    await createFlow('u/admin/sfn_seq_loop', [{ id: 'loop', value: { type: 'forloopflow', iterator: { type: 'static', value: [1, 2] }, parallel: false, modules: [ts('i', 'export function main() { return "it" }')] } }]);
    const id = await runFlow('u/admin/sfn_seq_loop');
    expect((await waitForJob(s, id)).result).toEqual(['it', 'it']);

    const parent = await executionOf(id);
    expect((await finished(parent.executionArn)).status).toBe('SUCCEEDED');
    const iteration = ['Advance', 'RunStepsCause', 'RunStepsTurn', 'RunSteps', 'StepKind', 'RunSubFlow'];
    expect(await statesEntered(parent.executionArn)).toEqual([...iteration, ...iteration, 'Advance']);
    const jobs: { id: string; parent_job: string; job_kind: string }[] = await (await s.fetch(`${ws()}/jobs/list?per_page=100`)).json();
    const children = jobs.filter((j) => j.parent_job === id && j.job_kind === 'flow');
    expect(children).toHaveLength(2);
    // Each iteration's own execution: its Advance runs the step and ends it.
    for (const child of children) expect(await statesEntered((await executionOf(child.id)).executionArn)).toEqual(['Advance']);
  });

  it('cancels an approval step at its deadline through the waiting state\'s own timeout', async () => {
    const ask = `import * as svc from 'svc-client';\nexport async function main() { return await svc.getResumeUrls() }`;
    await createFlow('u/admin/sfn_deadline', [ts('ask', ask, { suspend: { required_events: 1, timeout: 1 } }), ts('after', 'export function main() { return "late" }')]);
    const id = await runFlow('u/admin/sfn_deadline');
    const job = await waitForJob(s, id);
    expect(job.status).toBe('canceled');
    expect(job.result.error.name).toBe('SuspendTimeout');

    const { executionArn } = await executionOf(id);
    const execution = await finished(executionArn);
    expect(execution).toMatchObject({ status: 'FAILED', error: 'FlowCanceled' });
    const states = await statesEntered(executionArn);
    expect(states.slice(states.indexOf('WaitUntilDeadline'))).toEqual(['WaitUntilDeadline', 'Advance', 'Canceled']);
  });

  it('waits at a ConsentGate on the same task as approval steps, with the timeout, until the consent endpoint decides', async () => {
    const gate = (timeout: number) => ({ id: 'gate', value: { type: 'consentgate', approvers: ['admin'], self_approval: true, timeout, message: 'ok?' } });
    await createFlow('u/admin/sfn_gate', [gate(600), ts('after', 'export function main(x: any) { return "approved" }')]);
    const id = await runFlow('u/admin/sfn_gate');
    const { executionArn } = await executionOf(id);
    for (let i = 0; i < 100 && (await statesEntered(executionArn)).at(-1) !== 'WaitUntilDeadline'; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await statesEntered(executionArn)).at(-1)).toBe('WaitUntilDeadline');
    expect((await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).status).toBe('awaiting_approval');
    expect((await s.post(`/api/v1/runs/${id}/consent`, { decision: 'approved' })).status).toBe(200);
    expect((await waitForJob(s, id)).result).toBe('approved');
    expect((await finished(executionArn)).status).toBe('SUCCEEDED');

    await createFlow('u/admin/sfn_gate_late', [gate(1)]);
    const late = await runFlow('u/admin/sfn_gate_late');
    expect((await waitForJob(s, late)).result).toMatchObject({ reason: 'timeout', approver: null });
    expect(await finished((await executionOf(late)).executionArn)).toMatchObject({ status: 'FAILED', error: 'FlowFailed' });
  });

  it('ends the execution as failed when the flow fails, so the console shows it', async () => {
    await createFlow('u/admin/sfn_fails', [ts('boom', 'export function main() { throw new Error("no") }')]);
    const id = await runFlow('u/admin/sfn_fails');
    expect((await waitForJob(s, id)).status).toBe('failed');
    expect(await finished((await executionOf(id)).executionArn)).toMatchObject({ status: 'FAILED', error: 'FlowFailed' });
  });
});
