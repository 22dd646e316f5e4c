import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

/**
 * POST flows/validate (the flow editor's live check): the rules of a create, nothing stored, each
 * error naming the step it is in — by id and by the field that holds it — however deep.
 */

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.stop());

const ws = () => `/api/w/${s.workspace}`;
const step = (id: string, content = 'export function main() { return 1 }', extra: Record<string, unknown> = {}) => ({ id, value: { type: 'rawscript', language: 'bun', content, input_transforms: {} }, ...extra });

async function validate(body: unknown) {
  const res = await s.post(`${ws()}/flows/validate`, body);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()).errors as { message: string; field: string; step: { id: string | null; field: string } | null }[];
}

describe('flows/validate', () => {
  it('answers no errors for a flow a create would take, and stores nothing', async () => {
    const flow = { path: 'u/admin/checked', value: { modules: [step('a'), { ...step('b'), suspend: { required_events: 1 } }] } };
    expect(await validate(flow)).toEqual([]);
    expect(await validate({ value: flow.value })).toEqual([]);
    expect((await s.fetch(`${ws()}/flows/get/u/admin/checked`)).status).toBe(404);
  });

  it("says what a create says of Windmill's own fields: none at their defaults, the one set named where it is", async () => {
    const windmillStep = (id: string, tag: string | null) => ({ id, value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1 }', input_transforms: {}, tag, concurrent_limit: null, assets: [] } });
    const flow = (tag: string | null) => ({ path: 'u/admin/from_windmill', value: { modules: [{ id: 'loop', value: { type: 'forloopflow', iterator: { type: 'static', value: [1] }, modules: [windmillStep('a', tag)] } }] }, tag: null, ws_error_handler_muted: false, draft_only: false });
    expect(await validate(flow(null))).toEqual([]);
    expect((await s.post(`${ws()}/flows/create`, flow(null))).status).toBe(201);
    const [tagged] = await validate(flow('gpu'));
    const refused = await s.post(`${ws()}/flows/update/u/admin/from_windmill`, flow('gpu'));
    expect(refused.status).toBe(400);
    const { error } = await refused.json();
    expect(tagged).toMatchObject({ field: error.field, message: error.message, step: { id: 'a' } });
  });

  it('names the step of a shape error inside a loop inside a branch', async () => {
    const loop = { id: 'each', value: { type: 'forloopflow', iterator: { type: 'javascript', expr: '[1]' }, modules: [step('ok'), { id: 'bad', value: { type: 'rawscript', language: 'cobol', content: '', input_transforms: {} } }] } };
    const branch = { id: 'pick', value: { type: 'branchone', branches: [{ expr: 'true', modules: [loop] }], default: [] } };
    const [error] = await validate({ value: { modules: [step('first'), branch] } });
    expect(error.field).toBe('value.modules.1.value.branches.0.modules.0.value.modules.1.value.language');
    expect(error.step).toEqual({ id: 'bad', field: 'value.modules.1.value.branches.0.modules.0.value.modules.1' });
  });

  it('names the step of a rule a create checks after the shape: an id used twice, a timeout on a gate, unreadable code', async () => {
    const twice = await validate({ value: { modules: [step('a'), { id: 'loop', value: { type: 'forloopflow', iterator: { type: 'static', value: [] }, modules: [step('a')] } }] } });
    expect(twice[0].message).toMatch(/module id a is used twice/);
    // The first holder of the id: the editor points at a step that exists.
    expect(twice[0].step).toEqual({ id: 'a', field: 'value.modules.0' });
    const gate = await validate({ value: { modules: [step('a'), { id: 'gate', timeout: 5, value: { type: 'consentgate', approvers: ['admin'] } }] } });
    expect(gate[0]).toMatchObject({ message: expect.stringMatching(/timeout applies to script steps/), step: { id: 'gate', field: 'value.modules.1' } });
    const code = await validate({ value: { modules: [step('a', 'no main here')] } });
    expect(code[0]).toMatchObject({ step: { id: 'a', field: 'value.modules.0' } });
    const path = await validate({ value: { modules: [step('a'), { id: 'called', value: { type: 'script', path: 'not/a path', input_transforms: {} } }] } });
    expect(path[0]).toMatchObject({ field: 'value.modules.called.path', step: { id: 'called', field: 'value.modules.1' } });
  });

  it('reports what is outside any step without one, and refuses those who may write no flow', async () => {
    expect(await validate({ path: 'nowhere', value: { modules: [] } })).toMatchObject([{ field: 'path', step: null }]);
    expect(await validate({ value: { modules: [], early_return: 'x' } })).toMatchObject([{ field: 'value.early_return', step: null }]);
    expect((await s.post('/api/users/create', { username: 'olga', email: 'olga@example.com', password: 'olga-password' })).status).toBe(201);
    expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'olga', role: 'operator' })).status).toBe(201);
    const login = await s.fetch('/api/auth/login', { method: 'POST', token: null, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'olga@example.com', password: 'olga-password' }) });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const denied = await s.fetch(`${ws()}/flows/validate`, { method: 'POST', token: null, headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ value: { modules: [] } }) });
    expect(denied.status).toBe(403);
  });
});
