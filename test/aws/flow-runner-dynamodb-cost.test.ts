import { describe, expect, it } from 'vitest';
import { waitForJob, type TestServer } from '../http/harness.js';
import { createFlowIn, useFlowRunnerServer } from './flow-runner-server.js';
import { emptyRequests, type DynamoRequests } from './dynamodb-request-counter.js';

/**
 * The DynamoDB requests a flow of plain steps makes in the flow runner, counted on the wire
 * (dynamodb-request-counter.ts) rather than guessed: docs/aws.md "Costs" prices a step run inside
 * Advance from these numbers. A step's share is the difference between an 11-step and a 1-step
 * flow, divided by ten, so what every flow pays once (its first turn, its end) cancels out.
 */

let s: TestServer;
useFlowRunnerServer({ SVC_TEST_COUNT_DYNAMODB: 'true' }, (started) => ({ s } = started));

const step = (i: number) => ({ id: `s${i}`, value: { type: 'rawscript', language: 'bun', content: 'export function main(x: number) { console.log("step", x); return x + 1 }', input_transforms: { x: { type: 'javascript', expr: i === 0 ? '0' : 'previous_result' } } } });

/** Everything the flow runner's invocations for `flowJobId` asked DynamoDB, summed. */
function flowRunnerRequests(flowJobId: string): DynamoRequests {
  const total = emptyRequests();
  for (const m of s.output().matchAll(new RegExp(`dynamodb requests of flow-runner \\w+ ${flowJobId}: (\\{.*\\})`, 'g'))) {
    const one = JSON.parse(m[1]) as DynamoRequests;
    total.writes += one.writes;
    total.transactWrites += one.transactWrites;
    total.putUnits += one.putUnits;
    total.reads += one.reads;
    for (const [op, n] of Object.entries(one.ops)) total.ops[op] = (total.ops[op] ?? 0) + n;
  }
  return total;
}

async function runSteps(path: string, count: number): Promise<DynamoRequests> {
  await createFlowIn(s, path, Array.from({ length: count }, (_, i) => step(i)));
  const id = await (await s.post(`/api/w/${s.workspace}/jobs/run/p/${path}`, {})).text();
  expect((await waitForJob(s, id, 90_000)).result).toBe(count);
  // The invocation prints its line once it has answered, just after the job is stored.
  for (const deadline = Date.now() + 20_000; !s.output().includes(`flow-runner advance ${id}:`); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > deadline) throw new Error(`no count printed for flow ${id}`);
  }
  return flowRunnerRequests(id);
}

describe('a plain step run inside Advance', () => {
  it('costs the DynamoDB writes and reads docs/aws.md "Costs" prices', async () => {
    const one = await runSteps('u/admin/cost_one', 1);
    const eleven = await runSteps('u/admin/cost_eleven', 11);
    const perStep = { writes: (eleven.writes - one.writes) / 10, transactWrites: (eleven.transactWrites - one.transactWrites) / 10, putUnits: (eleven.putUnits - one.putUnits) / 10, reads: (eleven.reads - one.reads) / 10 };
    const perOp = Object.fromEntries(Object.keys(eleven.ops).map((op) => [op, ((eleven.ops[op] ?? 0) - (one.ops[op] ?? 0)) / 10]));
    console.log('per step', JSON.stringify(perStep), JSON.stringify(perOp), 'one-step flow', JSON.stringify(one));
    // The step's job stored (queued), claimed and completed, and the flow's run stored once per
    // turn: no write of the flow's wait record (no wake, no turn counter) per step.
    expect(perOp).toMatchObject({ PutItem: 2, UpdateItem: 2 });
    expect(perStep.writes).toBe(4);
    // The run, gzipped past 1 KB, stays within two units a turn at eleven steps (4 KB of JSON).
    expect(perStep.putUnits).toBeLessThanOrEqual(3);
    // Strongly consistent GetItems of the flow job, its run and the step job, and the Queries of a
    // running job's log chunks that come with reading it.
    expect(perStep.reads).toBeLessThanOrEqual(14);
  }, 200_000);
});
