import { describe, expect, it } from 'vitest';
import { api, apiGet, newProject, newWorkspace, target, useServer } from './cli-harness.js';

/** Deciding approvals from the CLI: `svc flow run` says how instead of waiting silently; `svc job approve|reject`. */

const server = useServer();

const STEP = (content: string, input_transforms = {}) => ({ type: 'rawscript', language: 'bun', content, input_transforms });

const APPROVAL_FLOW = {
  summary: 'needs a yes',
  schema: { type: 'object', properties: {} },
  value: {
    modules: [
      { id: 'ask', value: STEP('export function main() { return {}; }\n'), suspend: { required_events: 1, timeout: 600 } },
      { id: 'after', value: STEP('export function main(ok: unknown) { return { approved_with: ok }; }\n', { ok: { type: 'javascript', expr: 'resume' } }) },
    ],
  },
};

async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const statusOf = async (s: ReturnType<typeof server>, ws: string, id: string) => (await apiGet<{ status: string }>(s, ws, `/jobs_u/get/${id}`)).body.status;

describe('approvals from the CLI', () => {
  it('svc flow run prints the approval page and the commands, and svc job approve lets the flow go on', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/flows/create', { path: 'f/ops/refund', ...APPROVAL_FLOW });
    const project = newProject();
    const running = project.svc(['flow', 'run', 'f/ops/refund', ...target(s, ws)]);
    const id = await until(async () => {
      const listed = await apiGet<{ id: string; status: string; parent_job: string | null }[]>(s, ws, '/jobs/list?status=suspended');
      return listed.body.find((j) => j.parent_job === null)?.id;
    });

    const suspended = await project.svc(['job', 'list', '--status', 'suspended', ...target(s, ws)]);
    expect(suspended.stdout).toContain(id);

    const approved = await project.svc(['job', 'approve', id, '-d', '{"amount": 12}', ...target(s, ws)]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toBe('approved step ask (1 of 1 approvals)\n');

    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`flow ${id} is suspended, waiting for approval`);
    expect(run.stderr).toMatch(new RegExp(`approval page \\(step ask\\): ${s.url}/approve/${ws}/[0-9a-f-]+/\\d+/[0-9a-f]{64}`));
    expect(run.stderr).toContain(`svc job approve ${id}`);
    expect(JSON.parse(run.stdout)).toEqual({ approved_with: { amount: 12 } });

    // Nothing waits any more: a second decision says so and changes nothing.
    const again = await project.svc(['job', 'approve', id, ...target(s, ws)]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`job ${id} is success: it waits for no approval`);
  });

  it('an approval form left empty is refused with how to fill it, and the hint of svc flow run says it', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    const [ask, after] = APPROVAL_FLOW.value.modules;
    const form = { schema: { properties: { note: { type: 'string' } }, required: ['note'], order: ['note'] } };
    await api(s, ws, '/flows/create', { path: 'f/ops/refund', ...APPROVAL_FLOW, value: { modules: [{ ...ask, suspend: { ...ask.suspend, resume_form: form } }, after] } });
    const project = newProject();
    const running = project.svc(['flow', 'run', 'f/ops/refund', ...target(s, ws)]);
    const id = await until(async () => {
      const listed = await apiGet<{ id: string; parent_job: string | null }[]>(s, ws, '/jobs/list?status=suspended');
      return listed.body.find((j) => j.parent_job === null)?.id;
    });

    const bare = await project.svc(['job', 'approve', id, ...target(s, ws)]);
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain(`job ${id}: note: required by the approval form (give the approval form's values with -d '{"field": "value", ...}')`);
    expect(await statusOf(s, ws, id)).toBe('suspended');

    const approved = await project.svc(['job', 'approve', id, '-d', '{"note": "ok"}', ...target(s, ws)]);
    expect(approved.code, approved.stderr).toBe(0);
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`decide with: svc job approve ${id} [-d '{"field": "value", ...}': the approval form's values]`);
    expect(JSON.parse(run.stdout)).toEqual({ approved_with: { note: 'ok' } });
  });

  it('svc job reject cancels the approval step with the reason', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/flows/create', { path: 'f/ops/refund', ...APPROVAL_FLOW });
    const project = newProject();
    const started = await project.svc(['flow', 'run', 'f/ops/refund', '--no-wait', ...target(s, ws)]);
    const id = started.stdout.trim();
    await until(async () => ((await statusOf(s, ws, id)) === 'suspended' ? true : undefined));
    const rejected = await project.svc(['job', 'reject', id, '--reason', 'not this quarter', ...target(s, ws)]);
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(rejected.stdout).toBe('rejected step ask\n');
    const final = await until(async () => {
      const status = await statusOf(s, ws, id);
      return status === 'suspended' || status === 'running' ? undefined : status;
    });
    expect(final).toBe('canceled');
  });

  it('decides a ConsentGate through the consent endpoint; a rejection needs a reason', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/flows/create', {
      path: 'f/ops/pay',
      summary: 'pay',
      schema: { type: 'object', properties: {} },
      value: { modules: [{ id: 'gate', value: { type: 'consentgate', approvers: ['admin'], self_approval: true, message: 'Pay?' } }, { id: 'paid', value: STEP('export function main() { return "paid"; }\n') }] },
    });
    const project = newProject();
    const id = (await project.svc(['flow', 'run', 'f/ops/pay', '--no-wait', ...target(s, ws)])).stdout.trim();
    await until(async () => ((await statusOf(s, ws, id)) === 'awaiting_approval' ? true : undefined));

    const noReason = await project.svc(['job', 'reject', id, ...target(s, ws)]);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain('rejecting a ConsentGate needs --reason');

    const approved = await project.svc(['job', 'approve', id, ...target(s, ws)]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toBe('approved the ConsentGate\n');
    expect(await until(async () => ((await statusOf(s, ws, id)) === 'success' ? 'success' : undefined))).toBe('success');
  });
});
