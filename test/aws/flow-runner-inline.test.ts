import { describe, expect, it } from 'vitest';
import { DescribeExecutionCommand, GetExecutionHistoryCommand, ListExecutionsCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { waitForJob, type TestServer } from '../http/harness.js';
import { createFlowIn, ts, useFlowRunnerServer } from './flow-runner-server.js';

/**
 * Plain steps run inside the flow runner's Advance (functions/adapters/aws/inline-flow-steps.ts),
 * at its edges: a step whose timeout does not fit in the invocation's time left goes to the
 * worker, and an Advance that dies mid-step neither loses the step nor runs it twice at once.
 */

async function executionOf(sfn: SFNClient, stateMachineArn: string, jobId: string): Promise<string> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const { executions } = await sfn.send(new ListExecutionsCommand({ stateMachineArn }));
    const found = executions?.find((e) => e.name?.endsWith(jobId));
    if (found) return found.executionArn!;
  }
  throw new Error(`no execution for job ${jobId}`);
}

async function statesEntered(sfn: SFNClient, executionArn: string): Promise<string[]> {
  const { events } = await sfn.send(new GetExecutionHistoryCommand({ executionArn }));
  return (events ?? []).flatMap((e) => (e.stateEnteredEventDetails ? [e.stateEnteredEventDetails.name ?? ''] : []));
}

/** Once the execution has ended (its job may finish a moment before). */
async function ended(sfn: SFNClient, executionArn: string): Promise<void> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    if ((await sfn.send(new DescribeExecutionCommand({ executionArn }))).status !== 'RUNNING') return;
  }
  throw new Error(`execution ${executionArn} still running`);
}

async function run(s: TestServer, path: string): Promise<string> {
  return (await s.post(`/api/w/${s.workspace}/jobs/run/p/${path}`, {})).text();
}

/** The flow's step jobs (not sub-flows), each as `jobs_u/get` shows it. */
async function stepJobs(s: TestServer, flowJobId: string): Promise<Array<{ id: string; flow_module: string | null; attempts: number }>> {
  const jobs = (await (await s.fetch(`/api/w/${s.workspace}/jobs/list?per_page=100`)).json()) as Array<{ id: string; parent_job: string | null; job_kind: string }>;
  const steps = jobs.filter((j) => j.parent_job === flowJobId && j.job_kind !== 'flow');
  const views = await Promise.all(steps.map(async (j) => (await (await s.fetch(`/api/w/${s.workspace}/jobs_u/get/${j.id}`)).json()) as { id: string; flow_module: string | null; attempts: number }));
  return views.sort((a, b) => String(a.flow_module).localeCompare(String(b.flow_module)));
}

describe('a step too long for the time Advance has left', () => {
  let s: TestServer;
  let sfn: SFNClient;
  let stateMachineArn: string;
  // 880 s + the 30 s margin never fit in the function's 900 s: only steps with a shorter `timeout` run inline.
  useFlowRunnerServer({ SVC_JOB_TIMEOUT_SECONDS: '880' }, (started) => ({ s, sfn, stateMachineArn } = started));

  it('goes to the worker through the queue, as before; a short one beside it runs in Advance', async () => {
    await createFlowIn(s, 'u/admin/inline_fallback', [
      ts('short', 'export function main() { return 1 }', { timeout: 5 }),
      { id: 'long', value: { type: 'rawscript', language: 'bun', content: 'export function main(x: number) { return x + 1 }', input_transforms: { x: { type: 'javascript', expr: 'previous_result' } } } },
    ]);
    const id = await run(s, 'u/admin/inline_fallback');
    expect((await waitForJob(s, id, 60_000)).result).toBe(2);
    const executionArn = await executionOf(sfn, stateMachineArn, id);
    await waitForJob(s, id);
    await ended(sfn, executionArn);
    // A step sent to the worker is a turn of four transitions; the Advance after it ends the flow.
    expect(await statesEntered(sfn, executionArn)).toEqual(['Advance', 'RunScriptStepCause', 'RunScriptStepTurn', 'RunScriptStep', 'Advance']);
  }, 90_000);
});

/**
 * The lease margin of the server below (SVC_JOB_LEASE_MARGIN_SECONDS; 60 s by default), and most
 * of the test's time. Step Functions retries the dead Advance 5 s after it failed, as long as the
 * step's job timeout: the margin is the time the retried Advance has to start and find the step
 * still leased (here about a second idle; 15 s leaves room for a loaded two-core CI machine).
 */
const LEASE_MARGIN_SECONDS = 15;

describe('an Advance that dies mid-step', () => {
  let s: TestServer;
  let sfn: SFNClient;
  let stateMachineArn: string;
  // A 5 s job timeout. The first run of the marked step never answers, and its invocation dies
  // there (its runtime exits) with the step claimed for 5 s + LEASE_MARGIN_SECONDS.
  useFlowRunnerServer(
    { SVC_JOB_TIMEOUT_SECONDS: '5', SVC_JOB_LEASE_MARGIN_SECONDS: String(LEASE_MARGIN_SECONDS), SVC_TEST_FLOW_RUNNER_LOSE_ONCE: 'lose-me' },
    (started) => ({ s, sfn, stateMachineArn } = started),
  );

  it('leaves the step to its lease, then runs it again once (attempt 2), and the flow finishes', async () => {
    await createFlowIn(s, 'u/admin/inline_crash', [
      ts('first', 'export function main() { return 1 }'),
      { id: 'second', value: { type: 'rawscript', language: 'bun', content: '// lose-me\nexport function main(x: number) { return x + 1 }', input_transforms: { x: { type: 'javascript', expr: 'previous_result' } } } },
    ]);
    const id = await run(s, 'u/admin/inline_crash');
    // The dead invocation's lease (5 s + LEASE_MARGIN_SECONDS) runs out before anyone runs the step again.
    expect((await waitForJob(s, id, 60_000)).result).toBe(2);
    const steps = await stepJobs(s, id);
    // Sorted by step id: `first` ran once, `second` twice (the dead run, then the one that finished).
    expect(steps.map((j) => [j.flow_module, j.attempts])).toEqual([['first', 1], ['second', 2]]);
    const executionArn = await executionOf(sfn, stateMachineArn, id);
    await ended(sfn, executionArn);
    // Advance (dies, retried: one state), then the wait for the lease, then the Advance that reruns it.
    expect(await statesEntered(sfn, executionArn)).toEqual(['Advance', 'WaitUntilDeadlineCause', 'WaitUntilDeadlineTurn', 'WaitUntilDeadline', 'Advance']);
  }, 90_000);
});
