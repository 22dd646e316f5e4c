import { beforeAll, describe, expect, it } from 'vitest';
import { createScript, inProcessService, json, type InProcessService } from './harness.js';

/**
 * Connections (resources), resource types and variables in-process (spec 2.1-2.3, 4.6, 4.9, 5.5,
 * 7.5): who may read and write them, `$res:`/`$var:` arguments bound right before a job runs, the
 * client calls acting as the job's creator. test/http/connections.test.ts runs the same over real
 * HTTP, with the Python client and a look into the data directory.
 */

let s: InProcessService;
const SECRET = `hunter2-${Math.random().toString(36).slice(2)}`;

const ws = '/api/w/main';

let alice: string;
let bob: string;

async function memberToken(username: string, role: string): Promise<string> {
  await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` });
  await s.post(`${ws}/workspaces/add_user`, { username, role });
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  return (await s.fetch('/api/users/tokens/create', { ...json({ label: 'tests' }), token: null, headers: { cookie, 'content-type': 'application/json' } })).text();
}

const DB = { host: 'db.internal', port: 5432, user: 'app', dbname: 'orders', sslmode: 'require', password: '$var:u/alice/db_password' };

beforeAll(async () => {
  s = await inProcessService();
  alice = await memberToken('alice', 'developer');
  bob = await memberToken('bob', 'developer');
  // bob may read and run what is in f/shared, nothing of alice's own.
  await s.fetch(`${ws}/folders/create`, { ...json({ name: 'shared', extra_perms: { 'u/bob': false } }), token: alice });
  expect((await s.fetch(`${ws}/variables/create`, { ...json({ path: 'u/alice/db_password', value: SECRET, is_secret: true, description: 'db' }), token: alice })).status).toBe(201);
  expect((await s.fetch(`${ws}/variables/create`, { ...json({ path: 'u/alice/region', value: 'eu-west-1' }), token: alice })).status).toBe(201);
  expect((await s.fetch(`${ws}/resources/create`, { ...json({ path: 'u/alice/orders_db', resource_type: 'postgresql', value: DB }), token: alice })).status).toBe(201);
});

describe('resource types and resources', () => {
  it('ships the postgresql type of spec 2.2 and accepts custom types', async () => {
    const types = await (await s.fetch(`${ws}/resources/type/list`, { token: alice })).json();
    const pg = types.find((t: { name: string }) => t.name === 'postgresql');
    expect(Object.keys(pg.schema.properties)).toEqual(['host', 'port', 'user', 'dbname', 'sslmode', 'password', 'root_certificate_pem']);
    expect(pg.builtin).toBe(true);
    expect((await s.fetch(`${ws}/resources/type/create`, { ...json({ name: 'postgresql', schema: { type: 'object' } }), token: alice })).status).toBe(409);
    const created = await s.fetch(`${ws}/resources/type/create`, {
      ...json({ name: 'slack_webhook', schema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } }),
      token: alice,
    });
    expect(created.status).toBe(201);
    expect((await s.fetch(`${ws}/resources/type/get/slack_webhook`, { token: bob }).then((r) => r.json())).schema.required).toEqual(['url']);
    const badName = await s.fetch(`${ws}/resources/type/create`, { ...json({ name: 'Bad Name', schema: { type: 'object' } }), token: alice });
    expect((await badName.json()).error.field).toBe('name');
  });

  it('returns a resource as an object with value; lists without values', async () => {
    const got = await (await s.fetch(`${ws}/resources/get/u/alice/orders_db`, { token: alice })).json();
    expect(got).toMatchObject({ path: 'u/alice/orders_db', resource_type: 'postgresql', value: DB, created_by: 'alice' });
    const listed = await (await s.fetch(`${ws}/resources/list?resource_type=postgresql`, { token: alice })).json();
    expect(listed).toEqual([expect.objectContaining({ path: 'u/alice/orders_db' })]);
    expect(listed[0]).not.toHaveProperty('value');
    // The client libraries' call resolves `$var:` references inside the value.
    const value = await (await s.fetch(`${ws}/resources/get_value_interpolated/u/alice/orders_db`, { token: alice })).json();
    expect(value).toEqual({ ...DB, password: SECRET });
  });

  it('validates a value against its type and refuses bad input without storing anything', async () => {
    const badPort = await s.fetch(`${ws}/resources/create`, { ...json({ path: 'u/alice/bad', resource_type: 'postgresql', value: { ...DB, port: 'five' } }), token: alice });
    expect(badPort.status).toBe(400);
    expect((await badPort.json()).error.field).toBe('value.port');
    const missing = await s.fetch(`${ws}/resources/create`, { ...json({ path: 'u/alice/bad', resource_type: 'postgresql', value: { host: 'x' } }), token: alice });
    expect((await missing.json()).error.field).toBe('value.user');
    const unknownType = await s.fetch(`${ws}/resources/create`, { ...json({ path: 'u/alice/bad', resource_type: 'mongo', value: {} }), token: alice });
    expect((await unknownType.json()).error.field).toBe('resource_type');
    const badPath = await s.fetch(`${ws}/resources/create`, { ...json({ path: 'nowhere', resource_type: 'postgresql', value: DB }), token: alice });
    expect((await badPath.json()).error.field).toBe('path');
    expect((await s.fetch(`${ws}/resources/create`, { ...json({ path: 'u/alice/orders_db', resource_type: 'postgresql', value: DB }), token: alice })).status).toBe(409);
    expect((await s.fetch(`${ws}/resources/get/u/alice/bad`, { token: alice })).status).toBe(404);
  });

  it('updates and deletes a resource', async () => {
    await s.fetch(`${ws}/resources/create`, { ...json({ path: 'u/alice/tmp_db', resource_type: 'postgresql', value: DB }), token: alice });
    const updated = await s.fetch(`${ws}/resources/update/u/alice/tmp_db`, { ...json({ value: { ...DB, host: 'replica' }, description: 'replica' }), token: alice });
    expect((await updated.json()).value.host).toBe('replica');
    expect((await s.fetch(`${ws}/resources/update/u/alice/tmp_db`, { ...json({ value: { ...DB, port: 'x' } }), token: alice })).status).toBe(400);
    expect((await (await s.fetch(`${ws}/resources/get/u/alice/tmp_db`, { token: alice })).json()).value.host).toBe('replica');
    expect((await s.fetch(`${ws}/resources/delete/u/alice/tmp_db`, { method: 'DELETE', token: alice })).status).toBe(200);
    expect((await s.fetch(`${ws}/resources/get/u/alice/tmp_db`, { token: alice })).status).toBe(404);
  });
});

describe('variables', () => {
  it('returns a secret to its owner and never lists it', async () => {
    const got = await (await s.fetch(`${ws}/variables/get/u/alice/db_password`, { token: alice })).json();
    expect(got).toMatchObject({ path: 'u/alice/db_password', value: SECRET, is_secret: true });
    const listed = await (await s.fetch(`${ws}/variables/list`, { token: alice })).json();
    expect(listed.find((v: { path: string }) => v.path === 'u/alice/region').value).toBe('eu-west-1');
    const secret = listed.find((v: { path: string }) => v.path === 'u/alice/db_password');
    expect(secret.is_secret).toBe(true);
    expect(secret).not.toHaveProperty('value');
    expect(JSON.stringify(listed)).not.toContain(SECRET);
  });

  it('updates a variable, turning a plain one secret', async () => {
    await s.fetch(`${ws}/variables/create`, { ...json({ path: 'u/alice/api_key', value: 'k1' }), token: alice });
    await s.fetch(`${ws}/variables/update/u/alice/api_key`, { ...json({ value: 'k2', is_secret: true }), token: alice });
    expect(await (await s.fetch(`${ws}/variables/get/u/alice/api_key`, { token: alice })).json()).toMatchObject({ value: 'k2', is_secret: true });
    const listed = await (await s.fetch(`${ws}/variables/list`, { token: alice })).json();
    expect(listed.find((v: { path: string }) => v.path === 'u/alice/api_key')).not.toHaveProperty('value');
    expect((await s.fetch(`${ws}/variables/delete/u/alice/api_key`, { method: 'DELETE', token: alice })).status).toBe(200);
    expect((await s.fetch(`${ws}/variables/get/u/alice/api_key`, { token: alice })).status).toBe(404);
  });

  it('refuses another user without rights, without a word of the value', async () => {
    for (const path of ['variables/get/u/alice/db_password', 'resources/get/u/alice/orders_db', 'resources/get_value_interpolated/u/alice/orders_db']) {
      const res = await s.fetch(`${ws}/${path}`, { token: bob });
      expect(res.status, path).toBe(403);
      expect(await res.text()).not.toContain(SECRET);
    }
    expect(await (await s.fetch(`${ws}/variables/list`, { token: bob })).json()).toEqual([]);
    const write = await s.fetch(`${ws}/variables/create`, { ...json({ path: 'u/alice/planted', value: 'x' }), token: bob });
    expect(write.status).toBe(403);
    const bad = await s.fetch(`${ws}/variables/create`, { ...json({ path: 'u/bob/x', value: 42 }), token: bob });
    expect((await bad.json()).error.field).toBe('value');
  });
});

describe('scripts reading connections and variables', () => {
  it('resolves $res: and $var: arguments right before the job runs, keeping the references in the job', async () => {
    await createScript(
      s,
      'f/shared/connect',
      `type Postgresql = { host: string; port: number; password: string };
       export function main(db: Postgresql, region: string, password: string) {
         return { host: db.host, port: db.port, same: db.password === password, region };
       }`,
    );
    const schema = (await (await s.fetch(`${ws}/scripts/get/p/f/shared/connect`, { token: alice })).json()).schema;
    expect(schema.properties.db).toMatchObject({ type: 'object', format: 'resource-postgresql' });
    const args = { db: '$res:u/alice/orders_db', region: '$var:u/alice/region', password: '$var:u/alice/db_password' };
    const res = await s.fetch(`${ws}/jobs/run_wait_result/p/f/shared/connect`, { ...json(args), token: alice });
    expect(await res.json()).toEqual({ host: 'db.internal', port: 5432, same: true, region: 'eu-west-1' });

    const id = await (await s.fetch(`${ws}/jobs/run/p/f/shared/connect`, { ...json(args), token: alice })).text();
    const job = await s.job(id);
    expect(job.success).toBe(true);
    expect(job.args).toEqual(args);
    expect(JSON.stringify(job)).not.toContain(SECRET);
  });

  it('fails the job of a user who may run the script but not read the bound variable (spec 5.5, 7.5)', async () => {
    const id = await (
      await s.fetch(`${ws}/jobs/run/p/f/shared/connect`, { ...json({ db: '$res:u/alice/orders_db', region: 'x', password: '$var:u/alice/db_password' }), token: bob })
    ).text();
    const job = await s.job(id);
    expect(job.status).toBe('failed');
    expect(job.result.error.name).toBe('BindingError');
    expect(job.result.error.message).toMatch(/^cannot resolve \$res:u\/alice\/orders_db: bob \(developer\) may not read resources at u\/alice\/orders_db/);
    expect(JSON.stringify(job)).not.toContain(SECRET);
    expect(JSON.stringify(job)).not.toContain('db.internal');
  });

  it('lets a TypeScript script read both through svc-client with its own job token', async () => {
    await createScript(
      s,
      'f/shared/client_ts',
      `import * as svc from 'svc-client';
       export async function main(path: string) {
         const db = await svc.getResource('u/alice/orders_db');
         let secret: unknown;
         try { secret = await svc.getVariable(path); } catch (e) { secret = 'error: ' + (e as Error).message; }
         // The secret itself must not end up in the stored result: its shape tells enough.
         const shape = typeof secret === 'string' && secret.startsWith('hunter2-') ? secret.length : secret;
         return { host: db?.host, secret: shape, context: svc.getContext() };
       }`,
    );
    const asAlice = await (await s.fetch(`${ws}/jobs/run_wait_result/p/f/shared/client_ts`, { ...json({ path: 'u/alice/db_password' }), token: alice })).json();
    expect(asAlice).toMatchObject({ host: 'db.internal', secret: SECRET.length, context: { workspace: 'main', username: 'alice', jobPath: 'f/shared/client_ts' } });
    expect(asAlice.context.jobId).toMatch(/^[0-9a-f-]{36}$/);

    // bob's job acts as bob: the library call is refused and nothing leaks.
    const asBob = await (await s.fetch(`${ws}/jobs/run_wait_result/p/f/shared/client_ts`, { ...json({ path: 'u/alice/db_password' }), token: bob })).json();
    expect(JSON.stringify(asBob)).not.toContain(SECRET);
    expect(JSON.stringify(asBob)).toMatch(/403/);
  });

  it('keeps a secret variable encrypted in the store', async () => {
    const stored = await s.store.getEntity('variable', 'main', 'u/alice/db_password');
    expect(stored).not.toBeNull();
    expect(JSON.stringify(stored)).not.toContain(SECRET);
  });
});
