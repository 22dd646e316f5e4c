import { describe, expect, it } from 'vitest';
import { ListExecutionsCommand, StopExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { waitForJob, type TestServer } from '../http/harness.js';
import { createFlowIn, ts, useFlowRunnerServer } from './flow-runner-server.js';
import { readSse } from '../http/sse-client.js';

/**
 * No flow run is stranded when its execution ends without it: stopped by hand (ABORTED), past its
 * time limit (TIMED_OUT), or failed with nothing to catch it (FAILED, as when the runner's own
 * Abandon state fails). The emulator emits the "Step Functions Execution Status Change" events
 * the stack's rule passes to the reaper function; one event is kept back, and the reaper's
 * reconcile (here every 2 s; the stack's every 5 minutes) ends that job from DescribeExecution.
 */

let s: TestServer;
let sfn: SFNClient;
let stateMachineArn: string;
let endpoint: string;

useFlowRunnerServer({ SVC_TEST_FLOW_RECONCILE_SECONDS: '2' }, (started) => {
  ({ s, sfn, stateMachineArn } = started);
  endpoint = /step functions endpoint ([^\s,]+)/.exec(started.s.output())![1]!;
});

const ws = () => `/api/w/${s.workspace}`;
const ask = ts('ask', `import * as svc from 'svc-client';\nexport async function main() { return await svc.getResumeUrls('ops') }`, { suspend: { required_events: 1 } });

async function executionOf(jobId: string): Promise<string> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const { executions } = await sfn.send(new ListExecutionsCommand({ stateMachineArn }));
    const found = executions?.find((e) => e.name?.endsWith(jobId));
    if (found) return found.executionArn!;
  }
  throw new Error(`no execution for job ${jobId}`);
}

async function jobOf(id: string): Promise<Record<string, any>> {
  return (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
}

async function untilStatus(id: string, status: string): Promise<void> {
  for (let job = await jobOf(id), deadline = Date.now() + 30_000; job.status !== status; job = await jobOf(id)) {
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status}, never ${status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The id of the one job of `path`, once it exists. */
async function jobIdOf(path: string): Promise<string> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const jobs: { id: string; script_path: string }[] = await (await s.fetch(`${ws()}/jobs/list?per_page=100&script_path_exact=${encodeURIComponent(path)}`)).json();
    const found = jobs.find((j) => j.script_path === path);
    if (found) return found.id;
  }
  throw new Error(`no job of ${path}`);
}

/** Not an AWS call: the emulator's way to end an execution as AWS would on its own. */
async function endExecution(executionArn: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'SvcTest.EndExecution' }, body: JSON.stringify({ executionArn, ...body }) });
  expect(res.status, await res.clone().text()).toBe(200);
}

describe('a flow whose execution ends without it', () => {
  it('is failed when its execution is stopped, and its sync caller gets the answer', async () => {
    await createFlowIn(s, 'u/admin/stranded_stop', [ask]);
    const answer = s.post(`${ws()}/jobs/run_wait_result/f/u/admin/stranded_stop`, {});
    const id = await jobIdOf('u/admin/stranded_stop');
    await untilStatus(id, 'suspended');
    await sfn.send(new StopExecutionCommand({ executionArn: await executionOf(id), cause: 'stopped by an operator' }));

    // The waiting request answers with the error (as for any failed run), not a timeout.
    expect(JSON.stringify(await (await answer).json())).toContain('FlowExecutionAborted');
    const job = await waitForJob(s, id);
    expect(job.status).toBe('failed');
    expect(job.result.error).toEqual({ name: 'FlowExecutionAborted', message: expect.stringContaining('was stopped (stopped by an operator)') });
  });

  it('is failed when its execution times out, and the parent flow waiting on it ends', async () => {
    await createFlowIn(s, 'u/admin/stranded_child', [ask]);
    await createFlowIn(s, 'u/admin/stranded_parent', [{ id: 'sub', value: { type: 'flow', path: 'u/admin/stranded_child', input_transforms: {} } }]);
    const parent = await (await s.post(`${ws()}/jobs/run/f/u/admin/stranded_parent`, {})).text();
    const child = await jobIdOf('u/admin/stranded_child');
    await untilStatus(child, 'suspended');
    await endExecution(await executionOf(child), { status: 'TIMED_OUT' });

    expect((await waitForJob(s, child)).result.error).toEqual({ name: 'FlowExecutionTimedOut', message: expect.stringContaining('reached its time limit (States.Timeout)') });
    const parentJob = await waitForJob(s, parent);
    expect(parentJob.status).toBe('failed');
    expect(JSON.stringify(parentJob.result)).toContain('FlowExecutionTimedOut');
  });

  it('is failed when its execution fails with nothing to catch it (the Abandon state failing), and its SSE stream ends with it', async () => {
    await createFlowIn(s, 'u/admin/stranded_fail', [ask]);
    const id = await (await s.post(`${ws()}/jobs/run/f/u/admin/stranded_fail`, {})).text();
    await untilStatus(id, 'suspended');
    const stream = s.fetch(`${ws()}/jobs_u/getupdate_sse/${id}`).then((res) => readSse(res));
    await endExecution(await executionOf(id), { status: 'FAILED', error: 'Lambda.ServiceException', cause: 'the flow runner could not be invoked' });

    expect((await stream).at(-1)).toMatchObject({ completed: true, status: 'failed', success: false });

    const job = await waitForJob(s, id);
    expect(job.status).toBe('failed');
    expect(job.result.error).toEqual({ name: 'FlowExecutionFailed', message: expect.stringContaining('failed (Lambda.ServiceException: the flow runner could not be invoked)') });
  });

  it('is failed by the reconcile when the status change event never arrives', async () => {
    await createFlowIn(s, 'u/admin/stranded_quiet_child', [ask]);
    await createFlowIn(s, 'u/admin/stranded_quiet', [{ id: 'sub', value: { type: 'flow', path: 'u/admin/stranded_quiet_child', input_transforms: {} } }]);
    const id = await (await s.post(`${ws()}/jobs/run/f/u/admin/stranded_quiet`, {})).text();
    const child = await jobIdOf('u/admin/stranded_quiet_child');
    await untilStatus(child, 'suspended');
    expect((await jobOf(id)).status).toBe('running');
    await endExecution(await executionOf(id), { status: 'FAILED', quiet: true });

    const job = await waitForJob(s, id);
    expect(job.result.error).toEqual({ name: 'FlowExecutionFailed', message: expect.stringContaining('failed (States.Runtime)') });
    // The sub-flow it was waiting for is not left waiting either.
    expect((await waitForJob(s, child)).status).toBe('canceled');
  });
});
