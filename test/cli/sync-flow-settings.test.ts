import { describe, expect, it } from 'vitest';
import { api, apiGet, changesOf, newProject, newWorkspace, target, useServer } from './cli-harness.js';

/**
 * Issue 32's "the CLI syncs every field": a flow using every failure and scheduling setting (step
 * retries, timeouts, sleeps, skip_if, stop_after_if, a while loop, a for loop's
 * stop_after_all_iters_if, continue_on_error, step cache_ttl and priority, a failure module, the
 * flow's concurrency limit, cache and priority) and a script with every run setting go through
 * `svc sync pull` and `svc sync push` and come back exactly as they were.
 */

const server = useServer();

const js = (expr: string) => ({ type: 'javascript', expr });
const bash = (content: string, input_transforms: Record<string, unknown> = {}) => ({ type: 'rawscript', language: 'bash', content, input_transforms });
const CHARGE = 'export function main(order: string) {\n  return { charged: order };\n}\n';

const FLOW_VALUE = {
  modules: [
    {
      id: 'fetch',
      summary: 'fetch the order',
      retry: { constant: { attempts: 2, seconds: 1 }, exponential: { attempts: 3, multiplier: 2, seconds: 2, random_factor: 10 } },
      timeout: 30,
      sleep: js('flow_input.pause'),
      cache_ttl: 600,
      priority: 90,
      continue_on_error: true,
      value: bash('order="$1"\necho "{\\"order\\": \\"$order\\"}"', { order: js('flow_input.order') }),
    },
    {
      id: 'charge',
      skip_if: { expr: 'flow_input.dry_run' },
      stop_after_if: { expr: 'result.charged === null', skip_if_stopped: false, error_message: 'nothing to charge' },
      timeout: js('flow_input.limit'),
      sleep: 5,
      value: { type: 'script', path: 'f/ops/charge', input_transforms: { order: js('results.fetch.order') } },
    },
    {
      id: 'poll',
      stop_after_if: { expr: 'result.done', skip_if_stopped: true },
      stop_after_all_iters_if: { expr: 'result.length > 3' },
      value: {
        type: 'whileloopflow',
        skip_failures: false,
        modules: [{ id: 'probe', sleep: 2, retry: { constant: { attempts: 1, seconds: 3 } }, value: bash('echo \'{"done": true}\'') }],
      },
    },
    {
      id: 'each',
      stop_after_all_iters_if: { expr: 'result.every((r) => r.ok)', error_message: 'some failed' },
      value: {
        type: 'forloopflow',
        iterator: js('[1, 2, 3]'),
        parallel: true,
        parallelism: 2,
        skip_failures: true,
        modules: [{ id: 'one', priority: 10, cache_ttl: 60, value: { type: 'script', path: 'f/ops/charge', input_transforms: { order: js('String(flow_input.iter.value)') } } }],
      },
    },
  ],
  failure_module: { id: 'failure', value: bash('step="$1"\necho "{\\"alerted\\": \\"$step\\"}"', { step: js('previous_result.error.step_id') }) },
  concurrent_limit: 2,
  concurrency_time_window_s: 60,
  concurrency_key: 'orders-$args[order]',
  cache_ttl: 300,
  priority: 40,
};

const SCRIPT_SETTINGS = { cache_ttl: 3600, concurrent_limit: 3, concurrency_time_window_s: 30, concurrency_key: '$workspace/$path', priority: 70 };

describe('svc sync: every flow setting of issue 32', () => {
  it('pulls a flow and a script using all of them and pushes them back unchanged', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/folders/create', { name: 'ops' });
    await api(s, ws, '/scripts/create', { path: 'f/ops/charge', language: 'bun', content: CHARGE, summary: 'charges', ...SCRIPT_SETTINGS });
    await api(s, ws, '/flows/create', { path: 'f/ops/orders', summary: 'orders', value: FLOW_VALUE });
    const flowBefore = (await apiGet(s, ws, '/flows/get/f/ops/orders')).body;
    const scriptBefore = (await apiGet(s, ws, '/scripts/get/p/f/ops/charge')).body;
    // What the server keeps is what was sent: nothing dropped before the CLI is involved.
    expect(flowBefore.value).toMatchObject(FLOW_VALUE);
    expect(scriptBefore).toMatchObject(SCRIPT_SETTINGS);

    const project = newProject();
    expect((await project.svc(['init'])).code).toBe(0);
    const pulled = await project.svc(['sync', 'pull', '--yes', '--json-output', ...target(s, ws)]);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(changesOf(pulled)).toEqual(['+ flow f/ops/orders', '+ folder ops', '+ script f/ops/charge']);
    const flowYaml = project.read('f/ops/orders.flow/flow.yaml');
    for (const field of ['exponential:', 'random_factor: 10', 'whileloopflow', 'stop_after_all_iters_if:', 'skip_if:', 'error_message: nothing to charge', 'concurrency_key:', 'priority: 90', 'cache_ttl: 600', 'continue_on_error: true', 'parallelism: 2']) {
      expect(flowYaml, field).toContain(field);
    }
    expect(project.read('f/ops/orders.flow/failure.inline_script.sh')).toContain('alerted');
    expect(project.read('f/ops/charge.script.yaml')).toContain('concurrent_limit: 3');

    // Read back from the files, nothing differs from the server.
    const dry = await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(changesOf(dry)).toEqual([]);

    // A push of both (their summaries edited) sends every setting back as it was.
    project.write('f/ops/orders.flow/flow.yaml', flowYaml.replace(/^summary: .*$/m, 'summary: orders, edited'));
    project.write('f/ops/charge.script.yaml', project.read('f/ops/charge.script.yaml').replace(/^summary: .*$/m, 'summary: charges, edited'));
    const pushed = await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(changesOf(pushed)).toEqual(['~ flow f/ops/orders', '~ script f/ops/charge']);
    const flowAfter = (await apiGet(s, ws, '/flows/get/f/ops/orders')).body;
    expect(flowAfter.summary).toBe('orders, edited');
    expect(flowAfter.value).toEqual(flowBefore.value);
    const scriptAfter = (await apiGet(s, ws, '/scripts/get/p/f/ops/charge')).body;
    expect(scriptAfter.summary).toBe('charges, edited');
    expect(scriptAfter.hash).not.toBe(scriptBefore.hash);
    expect(scriptAfter).toMatchObject({ content: CHARGE, ...SCRIPT_SETTINGS });

    const again = await project.svc(['sync', 'pull', '--json-output', ...target(s, ws)]);
    expect(again.code, again.stderr).toBe(0);
    expect(changesOf(again)).toEqual([]);
  });
});
