import { describe, expect, it } from 'vitest';
import { waitForJob, type TestServer } from '../http/harness.js';
import { createFlowIn, useFlowRunnerServer } from './flow-runner-server.js';
import { emptyRequests, type DynamoRequests } from './dynamodb-request-counter.js';

/**
 * The DynamoDB requests a flow of plain steps makes, counted on the wire
 * (dynamodb-request-counter.ts) rather than guessed: docs/aws.md "Costs" prices a step run inside
 * Advance, and a flow's own share, from these numbers. A step's share is the difference between an
 * 11-step and a 1-step flow, divided by ten, so what every flow pays once (its first turn, its
 * end) cancels out. Each step is the 1 s script the cost table assumes, printing a line: a running
 * job's live log and its checks for a cancel depend on how long it runs.
 */

let s: TestServer;
useFlowRunnerServer({ SVC_TEST_COUNT_DYNAMODB: 'true' }, (started) => ({ s } = started));

const step = (i: number) => ({
  id: `s${i}`,
  value: {
    type: 'rawscript',
    language: 'bun',
    content: 'export async function main(x: number) { console.log("step", x); await new Promise((r) => setTimeout(r, 1000)); return x + 1 }',
    input_transforms: { x: { type: 'javascript', expr: i === 0 ? '0' : 'previous_result' } },
  },
});

function add(total: DynamoRequests, one: DynamoRequests): DynamoRequests {
  total.writes += one.writes;
  total.transactWrites += one.transactWrites;
  total.putUnits += one.putUnits;
  total.reads += one.reads;
  for (const [op, n] of Object.entries(one.ops)) total.ops[op] = (total.ops[op] ?? 0) + n;
  return total;
}

/** Everything the invocations whose printed name matches `who` asked DynamoDB, summed. */
function requestsOf(who: string): DynamoRequests {
  const lines = s.output().matchAll(new RegExp(`dynamodb requests of ${who}: (\\{.*\\})`, 'g'));
  return [...lines].reduce((total, m) => add(total, JSON.parse(m[1]) as DynamoRequests), emptyRequests());
}

async function runSteps(path: string, count: number): Promise<{ flowRunner: DynamoRequests; run: DynamoRequests }> {
  await createFlowIn(s, path, Array.from({ length: count }, (_, i) => step(i)));
  const id = await (await s.post(`/api/w/${s.workspace}/jobs/run/p/${path}`, {})).text();
  expect((await waitForJob(s, id, 120_000)).result).toBe(count);
  // The invocation prints its line once it has answered, just after the job is stored.
  for (const deadline = Date.now() + 20_000; !s.output().includes(`flow-runner advance ${id}:`); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > deadline) throw new Error(`no count printed for flow ${id}`);
  }
  return { flowRunner: requestsOf(`flow-runner \\w+ ${id}`), run: requestsOf(`api POST \\S*/jobs/run/p/${path}`) };
}

const per = (a: number, b: number) => Math.round(((a - b) / 10) * 10) / 10;

describe('a flow of plain steps run inside Advance', () => {
  it('costs the DynamoDB writes and reads docs/aws.md "Costs" prices', async () => {
    const one = await runSteps('u/admin/cost_one', 1);
    const eleven = (await runSteps('u/admin/cost_eleven', 11)).flowRunner;
    const perStep = { writes: per(eleven.writes, one.flowRunner.writes), putUnits: per(eleven.putUnits, one.flowRunner.putUnits), reads: per(eleven.reads, one.flowRunner.reads) };
    const perOp = Object.fromEntries(Object.keys(eleven.ops).map((op) => [op, per(eleven.ops[op] ?? 0, one.flowRunner.ops[op] ?? 0)]));
    console.log('per step', JSON.stringify(perStep), JSON.stringify(perOp));
    console.log('one-step flow: flow runner', JSON.stringify(one.flowRunner), 'api run request', JSON.stringify(one.run));

    // The step's job stored already running for this Advance, its live log's chunk, its
    // completion, and the flow's run stored once per turn: no claim, and no write of the flow's
    // wait record (no wake of its flow, no turn counter) per step.
    expect(perOp).toMatchObject({ PutItem: 3, UpdateItem: 1 });
    expect(perStep.writes).toBe(4);
    // The run gzipped past 1 KB, without its modules (it names them in the flow version): about a
    // unit a turn; the job and the chunk one each.
    expect(perStep.putUnits).toBeLessThanOrEqual(3.4);
    // Strongly consistent GetItems of the flow job, its run and the step job, one look for a
    // cancel per running second; a flow job is read without a Query for log chunks it never has.
    // The flow version (immutable) is read once per warm process, the job limits once per 10 s.
    expect(perStep.reads).toBeLessThanOrEqual(10.5);
    // The api stores the flow job: one write, and reads of the caller, the workspace and the flow.
    expect(one.run.writes).toBe(1);
    // Per flow, the flow runner claims and completes the flow job, creates and deletes its wait
    // record, stores its run's first turn and counts the run's jobs once (its first step and 15
    // ahead: core/flows/step-admission.ts); no item of modules (the run names them in the version).
    expect(one.flowRunner.writes - perStep.writes).toBe(6);
  }, 240_000);
});
