import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedPackage, startFakeNpmRegistry, type FakeNpmRegistry } from './fake-npm-registry.js';
import { createScript, runSync, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Flows as Windmill's editor and CLI write them (the `value` of a `flow.yaml`, with the fields it
 * writes at their defaults), created over HTTP unchanged and run: input transforms and
 * JavaScript expressions, loops, branches, early stop, retries, the error handler, suspends. Each
 * asserts what a Windmill user would see; docs/windmill.md says where svc differs on purpose.
 */

let s: TestServer;
let registry: FakeNpmRegistry;
const ws = () => `/api/w/${s.workspace}`;
const js = (expr: string) => ({ type: 'javascript', expr });
const fixed = (value: unknown) => ({ type: 'static', value });
/** An inline step as Windmill's editor writes it: summary, empty lock and tag fields included. */
const bun = (id: string, content: string, input_transforms: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  id,
  summary: '',
  value: { type: 'rawscript', content, language: 'bun', input_transforms, lock: '' },
  ...extra,
});
const schema = (properties: Record<string, unknown>, required: string[] = []) => ({
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  order: Object.keys(properties),
  properties,
  required,
});

async function createFlow(path: string, value: Record<string, unknown>, flowSchema: unknown = schema({})): Promise<void> {
  const res = await s.post(`${ws()}/flows/create`, { path, summary: '', description: '', value, schema: flowSchema });
  expect(res.status, await res.clone().text()).toBe(201);
}

async function runFlow(path: string, args: unknown = {}): Promise<Record<string, any>> {
  const id = await (await s.post(`${ws()}/jobs/run/f/${path}`, args)).text();
  return waitForJob(s, id, 60_000);
}

beforeAll(async () => {
  // `windmill-client` as this checkout installed it, from a registry on loopback.
  registry = await startFakeNpmRegistry([installedPackage('windmill-client')]);
  s = await startServer({ env: { NPM_CONFIG_REGISTRY: registry.url } });
  expect((await s.post(`${ws()}/folders/create`, { name: 'flows' })).status).toBe(201);
  expect((await s.post(`${ws()}/variables/create`, { path: 'f/flows/greeting', value: 'Hello', is_secret: false, description: '' })).status).toBe(201);
  await createScript(s, 'f/flows/add', 'bun', 'export async function main(a: number, b: number) {\n  return a + b;\n}\n');
});
afterAll(async () => {
  await s?.stop();
  await registry?.close();
});

describe('flows as Windmill writes them', () => {
  it('passes flow_input, results.<id> and static `$var:` inputs between TypeScript, Python, Bash and script steps', async () => {
    await createFlow('f/flows/pipeline', {
      modules: [
        bun('a', 'export async function main(name: string, greeting: string) {\n  return { text: `${greeting} ${name}`, n: name.length };\n}\n', {
          name: js('flow_input.name'),
          greeting: fixed('$var:f/flows/greeting'),
        }),
        {
          id: 'b',
          summary: 'Add',
          value: { type: 'script', path: 'f/flows/add', input_transforms: { a: js('results.a.n'), b: fixed(10) }, is_trigger: false },
        },
        {
          id: 'c',
          summary: '',
          value: {
            type: 'rawscript',
            content: 'def main(text: str, total: int):\n    return {"python": text.upper(), "total": total}\n',
            language: 'python3',
            input_transforms: { text: js('results.a.text'), total: js('previous_result') },
            lock: '',
          },
        },
        {
          id: 'd',
          summary: '',
          value: { type: 'rawscript', content: 'msg="$1"\necho "bash got: $msg"\n', language: 'bash', input_transforms: { msg: js('`${results.c.python}!`') }, lock: '' },
        },
      ],
      same_worker: false,
    }, schema({ name: { type: 'string', description: '', default: null } }, ['name']));
    expect(await runSync(s, 'f/flows/pipeline', { name: 'Ada' })).toEqual({ status: 200, body: 'bash got: HELLO ADA!' });
  });

  it('loops over a list with flow_input.iter, and the steps after it read the list of results', async () => {
    await createFlow('f/flows/loop', {
      modules: [
        bun('list', 'export async function main() {\n  return ["dog", "cat", "cow"];\n}\n'),
        {
          id: 'loop',
          summary: '',
          value: {
            type: 'forloopflow',
            iterator: js('results.list'),
            skip_failures: true,
            parallel: true,
            modules: [bun('upper', 'export async function main(x: string, i: number) {\n  return `${i}:${x.toUpperCase()}`;\n}\n', { x: js('flow_input.iter.value'), i: js('flow_input.iter.index') })],
          },
        },
        bun('join', 'export async function main(items: string[]) {\n  return items.join(",");\n}\n', { items: js('results.loop') }),
      ],
    });
    expect((await runSync(s, 'f/flows/loop')).body).toBe('0:DOG,1:CAT,2:COW');
  });

  it('takes a branchone branch by its expression, and branchall runs them all', async () => {
    await createFlow('f/flows/branches', {
      modules: [
        bun('a', 'export async function main(n: number) {\n  return n;\n}\n', { n: js('flow_input.n') }),
        {
          id: 'b',
          summary: '',
          value: {
            type: 'branchone',
            branches: [
              { summary: 'big', expr: 'results.a > 10', modules: [bun('big', 'export async function main() {\n  return "big";\n}\n')] },
              { summary: 'small', expr: 'results.a > 0', modules: [bun('small', 'export async function main() {\n  return "small";\n}\n')] },
            ],
            default: [bun('zero', 'export async function main() {\n  return "zero";\n}\n')],
          },
        },
        {
          id: 'c',
          summary: '',
          value: {
            type: 'branchall',
            parallel: true,
            branches: [
              { summary: '', skip_failure: false, modules: [bun('x', 'export async function main(v: string) {\n  return v + "-x";\n}\n', { v: js('results.b') })] },
              { summary: '', skip_failure: true, modules: [bun('y', 'export async function main() {\n  throw new Error("y failed");\n}\n')] },
            ],
          },
        },
      ],
    }, schema({ n: { type: 'number' } }, ['n']));
    const big = (await runSync(s, 'f/flows/branches', { n: 42 })).body;
    expect(big[0]).toBe('big-x');
    expect(big[1]).toMatchObject({ error: { message: 'y failed' } });
    expect((await runSync(s, 'f/flows/branches', { n: 3 })).body[0]).toBe('small-x');
    expect((await runSync(s, 'f/flows/branches', { n: 0 })).body[0]).toBe('zero-x');
  });

  it('stops early after a step with stop_after_if, successfully, with that step\'s result', async () => {
    await createFlow('f/flows/early_stop', {
      modules: [
        bun('fetch', 'export async function main(items: string[]) {\n  return items;\n}\n', { items: js('flow_input.items') }, {
          stop_after_if: { expr: 'result.length === 0', skip_if_stopped: false, error_message: null },
        }),
        bun('process', 'export async function main(items: string[]) {\n  return items.length;\n}\n', { items: js('results.fetch') }),
      ],
    }, schema({ items: { type: 'array', items: { type: 'string' } } }));
    expect((await runSync(s, 'f/flows/early_stop', { items: ['a', 'b'] })).body).toBe(2);
    const stopped = await runFlow('f/flows/early_stop', { items: [] });
    expect(stopped.status).toBe('success');
    expect(stopped.result).toEqual([]);
  });

  it('ends the flow at a trigger script (`is_trigger` in its value) that finds no new events', async () => {
    await createFlow('f/flows/watch', {
      modules: [
        { id: 'a', summary: '', value: { type: 'rawscript', content: 'export async function main(events: number[]) {\n  return events;\n}\n', language: 'bun', input_transforms: { events: js('flow_input.events') }, is_trigger: true } },
        bun('b', 'export async function main(events: number[]) {\n  return events.length;\n}\n', { events: js('results.a') }),
      ],
    });
    expect((await runSync(s, 'f/flows/watch', { events: [1, 2] })).body).toBe(2);
    const quiet = await runFlow('f/flows/watch', { events: [] });
    expect(quiet).toMatchObject({ status: 'success', result: [] });
    expect(quiet.flow_status.stopped_early).toBe('a');
  });

  it('retries a failing step as the editor writes `retry`, the script keeping its state between attempts', async () => {
    await createScript(s, 'f/flows/flaky', 'bun', `import * as wmill from "windmill-client";

export async function main() {
  const attempts = ((await wmill.getState()) ?? 0) + 1;
  await wmill.setState(attempts);
  if (attempts < 3) throw new Error(\`attempt \${attempts} failed\`);
  return attempts;
}
`);
    await createFlow('f/flows/retrying', {
      modules: [{
        id: 'a',
        summary: '',
        value: { type: 'script', path: 'f/flows/flaky', input_transforms: {} },
        retry: { constant: { attempts: 3, seconds: 0 }, exponential: { attempts: 0, multiplier: 1, seconds: 0, random_factor: 0 } },
      }],
    });
    const job = await runFlow('f/flows/retrying');
    expect(job.status, JSON.stringify(job.result)).toBe('success');
    expect(job.result).toBe(3);
  });

  it('runs the failure_module with the error when a step fails', async () => {
    await createFlow('f/flows/with_handler', {
      modules: [
        bun('inner_script', 'export async function main(should_fail: boolean) {\n  if (should_fail) {\n    throw new Error("Demanded failure from inner_script");\n  }\n  return "Success";\n}\n', {
          should_fail: js('flow_input.should_fail'),
        }),
      ],
      failure_module: {
        id: 'failure',
        summary: 'Error handler',
        value: {
          lock: '',
          type: 'rawscript',
          content: 'export async function main(error: any) {\n  return { handled: true, reason: error?.message || "Unknown error", name: error?.name };\n}\n',
          language: 'bun',
          input_transforms: { error: js('error') },
        },
      },
    }, schema({ should_fail: { type: 'boolean' } }, ['should_fail']));
    expect((await runSync(s, 'f/flows/with_handler', { should_fail: false })).body).toBe('Success');
    const failed = await runFlow('f/flows/with_handler', { should_fail: true });
    expect(failed.status).toBe('failed');
    expect(failed.result).toMatchObject({ handled: true, reason: 'Demanded failure from inner_script', name: 'Error' });
  });

  it('suspends for an approval, sends resume URLs from the step with windmill-client, and resumes with the payload', async () => {
    await createFlow('f/flows/approval', {
      modules: [
        bun('ask', `import * as wmill from "windmill-client";

export async function main(amount: number) {
  const urls = await wmill.getResumeUrls("approver");
  return { amount, resume: urls.resume, cancel: urls.cancel };
}
`, { amount: js('flow_input.amount') }, { suspend: { required_events: 1, timeout: 1800 } }),
        bun('pay', 'export async function main(amount: number, note: string, approvers: string[]) {\n  return `paid ${amount} (${note}) by ${approvers.length}`;\n}\n', {
          amount: js('results.ask.amount'),
          note: js('resume.note'),
          approvers: js('approvers'),
        }),
      ],
    }, schema({ amount: { type: 'number' } }, ['amount']));
    const id = await (await s.post(`${ws()}/jobs/run/f/f/flows/approval`, { amount: 12 })).text();
    let job: any;
    const deadline = Date.now() + 60_000;
    for (;;) {
      job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
      if (job.status === 'suspended') break;
      expect(['queued', 'running'], JSON.stringify(job.result)).toContain(job.status);
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 50));
    }
    const ask = job.flow_status.results.ask;
    expect(ask.amount).toBe(12);
    const resume = new URL(ask.resume);
    const res = await fetch(s.url + resume.pathname + resume.search, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ note: 'ok' }) });
    expect(res.status, await res.clone().text()).toBe(200);
    const done = await waitForJob(s, id, 60_000);
    expect(done.status, JSON.stringify(done.result)).toBe('success');
    expect(done.result).toBe('paid 12 (ok) by 1');
  });

  it('validates inputs against a schema as the editor writes it (empty format, nullable, originalType, password)', async () => {
    const editorProperty = (type: string, extra: Record<string, unknown> = {}) => ({ type, description: '', default: null, format: '', nullable: false, originalType: type, password: false, ...extra });
    await createFlow('f/flows/editor_schema', {
      modules: [bun('a', 'export async function main(name: string, count: number) {\n  return `${name}:${count ?? "none"}`;\n}\n', { name: js('flow_input.name'), count: js('flow_input.count') })],
    }, schema({ name: editorProperty('string', { customErrorMessage: '', minRows: 1 }), count: editorProperty('integer') }, ['name']));
    expect((await runSync(s, 'f/flows/editor_schema', { name: 'x', count: 2 })).body).toBe('x:2');
    expect((await runSync(s, 'f/flows/editor_schema', { name: 'x' })).body).toBe('x:none');
  });

  it('reads outer results and flow inputs from the steps of a loop, and branches per item', async () => {
    await createFlow('f/flows/nested', {
      modules: [
        bun('prefix', 'export async function main(p: string) {\n  return p;\n}\n', { p: js('flow_input.prefix') }),
        {
          id: 'loop',
          summary: '',
          value: {
            type: 'forloopflow',
            iterator: js('flow_input.numbers'),
            skip_failures: false,
            parallel: false,
            modules: [{
              id: 'kind',
              summary: '',
              value: {
                type: 'branchone',
                branches: [{ summary: 'even', expr: 'flow_input.iter.value % 2 === 0', modules: [bun('even', 'export async function main(p: string, n: number) {\n  return `${p}${n} even`;\n}\n', { p: js('results.prefix'), n: js('flow_input.iter.value') })] }],
                default: [bun('odd', 'export async function main(p: string, n: number) {\n  return `${p}${n} odd`;\n}\n', { p: js('results.prefix'), n: js('flow_input.iter.value') })],
              },
            }],
          },
        },
      ],
    }, schema({ prefix: { type: 'string' }, numbers: { type: 'array', items: { type: 'number' } } }));
    expect((await runSync(s, 'f/flows/nested', { prefix: '#', numbers: [1, 2] })).body).toEqual(['#1 odd', '#2 even']);
  });

  it('shares values between the steps of one run with setFlowUserState / getFlowUserState', async () => {
    await createFlow('f/flows/user_state', {
      modules: [
        bun('a', `import * as wmill from "windmill-client";

export async function main(n: number) {
  const before = await wmill.getFlowUserState("seen");
  await wmill.setFlowUserState("seen", { n });
  return before ?? null;
}
`, { n: js('flow_input.n') }),
        bun('b', `import * as wmill from "windmill-client";

export async function main(before: unknown) {
  return { before, now: await wmill.getFlowUserState("seen", true) };
}
`, { before: js('results.a') }),
      ],
    }, schema({ n: { type: 'number' } }, ['n']));
    expect((await runSync(s, 'f/flows/user_state', { n: 5 })).body).toEqual({ before: null, now: { n: 5 } });
    // Each run has its own.
    expect((await runSync(s, 'f/flows/user_state', { n: 6 })).body).toEqual({ before: null, now: { n: 6 } });
  });

  it('takes the suspend settings as the editor writes them, and goes on after a cancel with continue_on_disapprove_timeout', async () => {
    const suspend = (goOn: boolean) => ({
      required_events: 1,
      timeout: 86400,
      resume_form: { schema: { type: 'object', properties: { approved: { type: 'boolean' } } } },
      user_auth_required: false,
      user_groups_required: { type: 'static', value: [] },
      self_approval_disabled: false,
      hide_cancel: false,
      continue_on_disapprove_timeout: goOn,
    });
    const ask = 'import * as wmill from "windmill-client";\n\nexport async function main() {\n  return await wmill.getResumeUrls("approver");\n}\n';
    const after = 'export async function main(decision: any) {\n  return decision;\n}\n';
    for (const goOn of [false, true]) {
      const path = `f/flows/ask_${goOn}`;
      await createFlow(path, { modules: [bun('ask', ask, {}, { suspend: suspend(goOn) }), bun('after', after, { decision: js('resume') })] });
      const id = await (await s.post(`${ws()}/jobs/run/f/${path}`, {})).text();
      let job: any;
      const deadline = Date.now() + 60_000;
      do {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((r) => setTimeout(r, 50));
        job = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
      } while (job.status !== 'suspended');
      const cancel = new URL(job.flow_status.results.ask.cancel);
      expect((await fetch(s.url + cancel.pathname + cancel.search, { method: 'POST' })).status).toBe(200);
      const done = await waitForJob(s, id, 60_000);
      if (goOn) expect(done).toMatchObject({ status: 'success', result: { error: { name: 'Canceled' } } });
      else expect(done.status).toBe('canceled');
    }
  });

  it('gives each step that runs a script by path its step id and a state of its own, as in Windmill', async () => {
    await createScript(s, 'f/flows/poll', 'bun', `import * as wmill from "windmill-client";

export async function main() {
  const seen = ((await wmill.getState()) ?? 0) + 1;
  await wmill.setState(seen);
  return { seen, step: process.env.WM_FLOW_STEP_ID, state: process.env.WM_STATE_PATH };
}
`);
    await createFlow('f/flows/two_polls', {
      modules: [
        { id: 'first', summary: '', value: { type: 'script', path: 'f/flows/poll', input_transforms: {} } },
        { id: 'second', summary: '', value: { type: 'script', path: 'f/flows/poll', input_transforms: {} } },
        bun('both', 'export async function main(a: any, b: any) {\n  return [a, b];\n}\n', { a: js('results.first'), b: js('results.second') }),
      ],
    });
    await createFlow('f/flows/one_poll', { modules: [{ id: 'watch', summary: '', value: { type: 'script', path: 'f/flows/poll', input_transforms: {} } }] });
    expect((await runSync(s, 'f/flows/two_polls')).body).toEqual([
      { seen: 1, step: 'first', state: 'f/flows/two_polls/first_user' },
      { seen: 1, step: 'second', state: 'f/flows/two_polls/second_user' },
    ]);
    expect((await runSync(s, 'f/flows/two_polls')).body.map((r: any) => r.seen)).toEqual([2, 2]);
    expect((await runSync(s, 'f/flows/one_poll')).body).toEqual({ seen: 1, step: 'watch', state: 'f/flows/one_poll/watch_user' });
  });
});

describe('flow bodies as Windmill clients build them', () => {
  it('takes Windmill-only fields at their defaults, on the flow and its steps, and refuses one that is set, naming where', async () => {
    const step = (id: string, expr: string) => ({
      ...bun(id, 'export async function main(n: number) {\n  return n * 2;\n}\n', { n: js(expr) }),
      value: { type: 'rawscript', content: 'export async function main(n: number) {\n  return n * 2;\n}\n', language: 'bun', input_transforms: { n: js(expr) }, lock: '', tag: null, concurrent_limit: null, concurrency_time_window_s: null, custom_concurrency_key: null, assets: [] },
    });
    const value = {
      modules: [
        step('a', 'flow_input.n'),
        { id: 'loop', value: { type: 'forloopflow', iterator: js('[results.a]'), skip_failures: false, parallel: false, modules: [step('b', 'flow_input.iter.value')] } },
        { id: 'ref', value: { type: 'script', path: 'f/flows/add', input_transforms: { a: js('results.loop[0]'), b: fixed(1) }, tag_override: '' } },
      ],
    };
    const body = { path: 'f/flows/from_client', summary: '', description: '', value, schema: schema({ n: { type: 'number' } }), tag: null, ws_error_handler_muted: false, dedicated_worker: false, visible_to_runner_only: false, draft_only: false };
    const created = await s.post(`${ws()}/flows/create`, body);
    expect(created.status, await created.clone().text()).toBe(201);
    expect((await runFlow('f/flows/from_client', { n: 5 })).result).toBe(21);

    const tagged = structuredClone(body);
    (tagged.value.modules[1].value as { modules: Array<{ value: Record<string, unknown> }> }).modules[0].value.tag = 'gpu';
    const res = await s.post(`${ws()}/flows/update/f/flows/from_client`, tagged);
    expect(res.status).toBe(400);
    const error = (await res.json()).error;
    expect(error.field).toBe('value.modules.1.value.modules.0.value.tag');
    expect(error.message).toContain('worker groups');
    expect((await (await s.fetch(`${ws()}/flows/get/f/flows/from_client`)).json()).value.modules[1].value.modules[0].value.tag).toBeUndefined();
  });
});
