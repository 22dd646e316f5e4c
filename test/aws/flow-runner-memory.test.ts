import { describe, expect, it } from 'vitest';
import { waitForJob, type TestServer } from '../http/harness.js';
import { createFlowIn, useFlowRunnerServer } from './flow-runner-server.js';

/**
 * The flow runner's peak memory for flows of plain steps with ~100 KB results, which docs/aws.md
 * "Costs" sizes `flowRunnerMemoryMb` from. Measured as the resident set of the AWS shell's process
 * while a flow-runner invocation runs (aws-shell-server.ts, SVC_TEST_REPORT_RSS): the api and the
 * emulators' clients share that process, so it is an upper bound of the flow runner's own.
 */

let s: TestServer;

const step = (i: number) => ({
  id: `s${i}`,
  value: {
    type: 'rawscript',
    language: 'bun',
    content: 'export async function main(x: number) { return { n: x + 1, pad: "x".repeat(100_000) } }',
    input_transforms: { x: { type: 'javascript', expr: i === 0 ? '0' : 'previous_result.n' } },
  },
});

async function peakMbOf(path: string, count: number): Promise<number> {
  await createFlowIn(s, path, Array.from({ length: count }, (_, i) => step(i)));
  const id = await (await s.post(`/api/w/${s.workspace}/jobs/run/p/${path}`, {})).text();
  expect(((await waitForJob(s, id, 240_000)).result as { n: number }).n).toBe(count);
  for (const deadline = Date.now() + 20_000; !s.output().includes(`rss of flow-runner advance ${id}:`); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > deadline) throw new Error(`no rss printed for flow ${id}`);
  }
  const lines = [...s.output().matchAll(new RegExp(`rss of flow-runner \\w+ ${id}: (\\d+).*`, 'g'))];
  console.log(`${count} steps:\n${lines.map((m) => m[0]).join('\n')}`);
  return Math.max(...lines.map((m) => Number(m[1])));
}

// A measurement for the docs, not a check: run it on purpose with
// SVC_MEASURE_FLOW_RUNNER_MEMORY=1 npx vitest run --project node test/aws/flow-runner-memory.test.ts
describe.skipIf(!process.env.SVC_MEASURE_FLOW_RUNNER_MEMORY)('the flow runner running plain steps with ~100 KB results', () => {
  useFlowRunnerServer({ SVC_TEST_REPORT_RSS: 'true' }, (started) => ({ s } = started));

  it('reports its peak memory for 10 and 40 steps', async () => {
    const ten = await peakMbOf('u/admin/mem_ten', 10);
    const forty = await peakMbOf('u/admin/mem_forty', 40);
    console.log(`peak rss (MB): 10 steps ${ten}, 40 steps ${forty}`);
    // Upper bounds (the whole shell process), printed for docs/aws.md "Costs"; no bound asserted:
    // they measure this machine's process, not a Lambda's.
    expect(ten).toBeGreaterThan(0);
    expect(forty).toBeGreaterThan(0);
  }, 480_000);
});
