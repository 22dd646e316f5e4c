import { describe, expect, it } from 'vitest';
import { inProcessService, loseFirstInsertOf, type InProcessService } from './harness.js';
import { advanceFlow } from '../../../functions/core/flows/advance.js';
import type { WorkerDeps } from '../../../functions/core/deps.js';

/**
 * A flow run is stored without its modules: they are in its flow version, which the stored run
 * names (`modules_at`), so every turn of a long flow writes what changed and not its definition
 * again. A branch's or loop's run names its list inside the version; the failure module comes
 * from the version too. Runs stored with their modules (before) are still read and finished.
 */
const step = (id: string, expr: string) => ({ id, value: { type: 'rawscript', language: 'bun', content: 'export function main(n: number) { return n + 1 }', input_transforms: { n: { type: 'javascript', expr } } } });

async function storedRun(s: InProcessService, id: string): Promise<Record<string, unknown>> {
  const e = await s.store.getEntity('flow_run', 'main', id);
  if (!e) throw new Error(`no run ${id}`);
  return e.value;
}

describe('a stored flow run', () => {
  it('names its modules in the version instead of holding them, for the flow, its branches, its loops and its failure module', async () => {
    const s = await inProcessService();
    const flow = {
      path: 'u/admin/nested',
      value: {
        modules: [
          step('a', 'flow_input.n'),
          {
            id: 'pick',
            value: { type: 'branchone', branches: [{ expr: 'results.a > 0', modules: [{ id: 'loop', value: { type: 'forloopflow', iterator: { type: 'static', value: [1, 2] }, skip_failures: false, modules: [step('inner', 'flow_input.iter.value')] } }] }], default: [] },
          },
          { id: 'boom', value: { type: 'rawscript', language: 'bun', content: 'export function main() { throw new Error("boom") }', input_transforms: {} } },
        ],
        failure_module: { id: 'failure', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return "handled" }', input_transforms: {} } },
      },
    };
    expect((await s.post('/api/w/main/flows/create', flow)).status).toBe(201);
    const id = await (await s.post('/api/w/main/jobs/run/p/u/admin/nested', { n: 1 })).text();
    const job = await s.job(id);
    expect(job).toMatchObject({ status: 'failed', result: 'handled' });

    const top = await storedRun(s, id);
    expect(top).not.toHaveProperty('modules');
    expect(top).not.toHaveProperty('failure_module');
    expect(top.modules_at).toBe('value.modules');
    // What the API shows of the run still has every module and the failure module's part.
    expect(job.flow_status).toMatchObject({ modules: ['a', 'pick', 'boom'], failure_module: { module: 'failure', step_id: 'boom' } });

    const [branch] = Object.entries(top.step_modules as Record<string, string>).find(([, module]) => module === 'pick')!;
    const branchRun = await storedRun(s, branch);
    expect(branchRun).not.toHaveProperty('modules');
    expect(branchRun.modules_at).toBe('value.modules.1.value.branches.0.modules');
    const iterations = (branchRun.child_jobs as Record<string, string[]>).loop;
    expect(iterations).toHaveLength(2);
    for (const iteration of iterations) {
      const run = await storedRun(s, iteration);
      expect(run).not.toHaveProperty('modules');
      expect(run.modules_at).toBe('value.modules.1.value.branches.0.modules.0.value.modules');
    }
    expect((await s.job(branch)).result).toEqual([2, 3]);
  });

  it('stored with its modules, as before, is read and goes on to the end', async () => {
    const s = await inProcessService();
    const flow = { path: 'u/admin/two', value: { modules: [step('a', '1'), step('b', 'results.a')] } };
    expect((await s.post('/api/w/main/flows/create', flow)).status).toBe(201);

    // Stop the flow between its steps (step b's insert fails), then store its run as a run of before.
    loseFirstInsertOf(s, 'b', 'stopped here');
    const id = await (await s.post('/api/w/main/jobs/run/p/u/admin/two', {})).text();
    await expect(s.settled()).rejects.toThrow('stopped here');
    const current = (await s.store.getEntity('flow_run', 'main', id))!;
    const { modules_at: _at, ...before } = current.value;
    expect(await s.store.replaceEntity({ ...current, value: { ...before, modules: flow.value.modules }, version: current.version + 1 }, current.version)).toBe(true);

    await advanceFlow(s.deps as WorkerDeps, 'main', id);
    expect(await s.job(id)).toMatchObject({ status: 'success', result: 3 });
    expect((await storedRun(s, id)).modules).toHaveLength(2);
  });
});
