import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedPackage, startFakeNpmRegistry, type FakeNpmRegistry } from './fake-npm-registry.js';
import { createScript, runSync, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Scripts as Windmill users write them, created in svc unchanged and run as jobs: the
 * `windmill-client` package imported in a job (installed as any import, here from a registry on loopback),
 * typed resource parameters, the `main` signature conventions, Bash arguments. Each asserts what
 * a Windmill user would see (docs/windmill.md says where svc differs on purpose).
 */

let s: TestServer;
let registry: FakeNpmRegistry;
const ws = () => `/api/w/${s.workspace}`;

beforeAll(async () => {
  // `windmill-client` as this checkout installed it, from a registry on loopback.
  registry = await startFakeNpmRegistry([installedPackage('windmill-client')]);
  s = await startServer({ env: { NPM_CONFIG_REGISTRY: registry.url } });
  expect((await s.post(`${ws()}/folders/create`, { name: 'ops' })).status).toBe(201);
  expect((await s.post(`${ws()}/variables/create`, { path: 'f/ops/api_key', value: 's3cr3t', is_secret: true, description: '' })).status).toBe(201);
  expect((await s.post(`${ws()}/variables/create`, { path: 'f/ops/greeting', value: 'Hello', is_secret: false, description: '' })).status).toBe(201);
  const db = { host: 'db.internal', port: 5432, user: 'app', dbname: 'orders', sslmode: 'disable', password: '$var:f/ops/api_key' };
  expect((await s.post(`${ws()}/resources/create`, { path: 'f/ops/db', value: db, resource_type: 'postgresql' })).status).toBe(201);
  await createScript(s, 'f/ops/double', 'bun', 'export async function main(x: number) {\n  return x * 2;\n}\n');
});
afterAll(async () => {
  await s?.stop();
  await registry?.close();
});

/** Runs a script by path and waits for its job: its status and result. */
async function run(path: string, args: unknown = {}): Promise<{ status: string; result: any; id: string }> {
  const id = await (await s.post(`${ws()}/jobs/run/p/${path}`, args)).text();
  const job = await waitForJob(s, id, 60_000);
  return { status: job.status, result: job.result, id };
}

describe('Deno scripts importing npm:windmill-client', () => {
  it('read variables and resources as Windmill users write them for Deno', async () => {
    await s.post(`${ws()}/scripts/create`, {
      path: 'f/ops/deno_config',
      language: 'deno',
      content: `import * as wmill from "npm:windmill-client@1";

export async function main(name: string) {
  const greeting = await wmill.getVariable("f/ops/greeting");
  const db = await wmill.getResource("f/ops/db");
  return { text: \`\${greeting} \${name}\`, host: db.host, password: db.password };
}
`,
    }).then(async (res) => expect(res.status, await res.clone().text()).toBe(201));
    const r = await run('f/ops/deno_config', { name: 'Ada' });
    expect(r.status, JSON.stringify(r.result)).toBe('success');
    expect(r.result).toEqual({ text: 'Hello Ada', host: 'db.internal', password: 's3cr3t' });
  });
});

describe('TypeScript scripts importing windmill-client', () => {
  it('reads variables and resources with `import * as wmill`', async () => {
    await createScript(s, 'f/ops/read_config', 'bun', `import * as wmill from "windmill-client";

export async function main() {
  const key = await wmill.getVariable("f/ops/api_key");
  const greeting = await wmill.getVariable("f/ops/greeting");
  const db = await wmill.getResource("f/ops/db");
  return { key, greeting, host: db.host, password: db.password };
}
`);
    // Resolved from the loopback registry, as a user's svc resolves it from theirs.
    expect(registry.requests).toContain('/windmill-client');
    const r = await run('f/ops/read_config');
    expect(r.status, JSON.stringify(r.result)).toBe('success');
    expect(r.result).toEqual({ key: 's3cr3t', greeting: 'Hello', host: 'db.internal', password: 's3cr3t' });
  });

  it('keeps state between runs with getState/setState (a cursor as Windmill users keep one)', async () => {
    await createScript(s, 'f/ops/counter', 'bun', `import * as wmill from "windmill-client";

export async function main() {
  const state = (await wmill.getState()) ?? { count: 0 };
  state.count += 1;
  await wmill.setState(state);
  return state.count;
}
`);
    expect((await run('f/ops/counter')).result).toBe(1);
    expect((await run('f/ops/counter')).result).toBe(2);
    expect((await run('f/ops/counter')).result).toBe(3);
  });

  it('sets variables and resources with named imports', async () => {
    await createScript(s, 'f/ops/writer', 'bun', `import { getVariable, setVariable, setResource, getResource } from "windmill-client";

export async function main(value: string) {
  await setVariable("f/ops/last_value", value);
  await setResource({ value }, "f/ops/last_object", "any");
  return { variable: await getVariable("f/ops/last_value"), resource: await getResource("f/ops/last_object") };
}
`);
    const r = await run('f/ops/writer', { value: 'first' });
    expect(r.status, JSON.stringify(r.result)).toBe('success');
    expect(r.result).toEqual({ variable: 'first', resource: { value: 'first' } });
    expect((await run('f/ops/writer', { value: 'second' })).result).toEqual({ variable: 'second', resource: { value: 'second' } });
  });

  it('runs other scripts, sync and async, and waits for them', async () => {
    await createScript(s, 'f/ops/orchestrate', 'bun', `import * as wmill from "windmill-client";

export async function main(n: number) {
  const sync = await wmill.runScriptByPath("f/ops/double", { x: n });
  const id = await wmill.runScriptByPathAsync("f/ops/double", { x: sync });
  const waited = await wmill.waitJob(id);
  const root = await wmill.getRootJobId();
  return { sync, waited, rootIsMe: root === process.env.WM_JOB_ID };
}
`);
    const r = await run('f/ops/orchestrate', { n: 3 });
    expect(r.status, JSON.stringify(r.result)).toBe('success');
    expect(r.result).toEqual({ sync: 6, waited: 12, rootIsMe: true });
  });

  it('reports its progress with setProgress, which getProgress and the API read back', async () => {
    await createScript(s, 'f/ops/batch', 'bun', `import * as wmill from "windmill-client";

export async function main(items: string[]) {
  const done: string[] = [];
  for (let i = 0; i < items.length; i++) {
    done.push(items[i].toUpperCase());
    await wmill.setProgress(((i + 1) / items.length) * 100);
  }
  return { done, progress: await wmill.getProgress() };
}
`);
    const r = await run('f/ops/batch', { items: ['a', 'b', 'c'] });
    expect(r.status, JSON.stringify(r.result)).toBe('success');
    expect(r.result).toEqual({ done: ['A', 'B', 'C'], progress: 100 });
    expect(await (await s.fetch(`${ws()}/job_metrics/get_progress/${r.id}`)).json()).toBe(100);
  });

  it('reads its job context from the environment', async () => {
    await createScript(s, 'f/ops/context', 'bun', `export async function main() {
  return {
    job: process.env.WM_JOB_ID,
    workspace: process.env.WM_WORKSPACE,
    path: process.env.WM_JOB_PATH,
    user: process.env.WM_USERNAME,
    email: process.env.WM_EMAIL,
    flow: process.env.WM_FLOW_JOB_ID,
    base: typeof process.env.WM_BASE_URL,
  };
}
`);
    const r = await run('f/ops/context');
    const admin = await (await s.fetch('/api/users/whoami')).json();
    expect(admin.email).toMatch(/@/);
    expect(r.result).toEqual({ job: r.id, workspace: s.workspace, path: 'f/ops/context', user: 'admin', email: admin.email, flow: '', base: 'string' });
  });
});

describe('typed resource parameters and main signatures', () => {
  it('gets a `$res:` argument as the resource value for a resource-typed parameter', async () => {
    await createScript(s, 'f/ops/connect', 'bun', `type Postgresql = {
  host: string;
  port: number;
  user: string;
  dbname: string;
  sslmode: string;
  password: string;
};

export async function main(db: Postgresql, table: string = "orders") {
  return \`postgres://\${db.user}:\${db.password}@\${db.host}:\${db.port}/\${db.dbname}?table=\${table}\`;
}
`);
    const script = await (await s.fetch(`${ws()}/scripts/get/p/f/ops/connect`)).json();
    expect(script.schema.properties.db.format).toBe('resource-postgresql');
    expect(script.schema.required).toEqual(['db']);
    const r = await runSync(s, 'f/ops/connect', { db: '$res:f/ops/db' });
    expect(r).toEqual({ status: 200, body: 'postgres://app:s3cr3t@db.internal:5432/orders?table=orders' });
  });

  it('applies defaults and accepts the usual parameter types', async () => {
    await createScript(s, 'f/ops/signature', 'bun', `export async function main(
  name: string,
  count: number = 2,
  tags: string[] = [],
  mode: "fast" | "slow" = "fast",
  options: { verbose: boolean } = { verbose: false },
  note?: string,
) {
  return { name, count, tags, mode, options, note: note ?? null };
}
`);
    const script = await (await s.fetch(`${ws()}/scripts/get/p/f/ops/signature`)).json();
    expect(script.schema.required).toEqual(['name']);
    expect(script.schema.properties.mode.enum).toEqual(['fast', 'slow']);
    expect((await runSync(s, 'f/ops/signature', { name: 'a' })).body).toEqual({ name: 'a', count: 2, tags: [], mode: 'fast', options: { verbose: false }, note: null });
    expect((await runSync(s, 'f/ops/signature', { name: 'b', count: 5, tags: ['x'], mode: 'slow', note: 'n' })).body).toMatchObject({ count: 5, tags: ['x'], mode: 'slow', note: 'n' });
  });

  it('runs a Python main with defaults and a TypedDict resource parameter', async () => {
    await createScript(s, 'f/ops/py_connect', 'python3', `from typing import TypedDict


class postgresql(TypedDict):
    host: str
    port: int
    user: str
    dbname: str
    password: str


def main(db: postgresql, limit: int = 10, verbose: bool = False):
    return {"dsn": f"postgresql://{db['user']}:{db['password']}@{db['host']}:{db['port']}/{db['dbname']}", "limit": limit, "verbose": verbose}
`);
    const script = await (await s.fetch(`${ws()}/scripts/get/p/f/ops/py_connect`)).json();
    expect(script.schema.properties.db.format).toBe('resource-postgresql');
    const r = await runSync(s, 'f/ops/py_connect', { db: '$res:f/ops/db' });
    expect(r).toEqual({ status: 200, body: { dsn: 'postgresql://app:s3cr3t@db.internal:5432/orders', limit: 10, verbose: false } });
  });

  it('fails with the error\'s own properties under `extra`, as Windmill shows an HTTP client\'s error', async () => {
    await createScript(s, 'f/ops/http_error', 'bun', `class HttpError extends Error {
  constructor(public status: number, public body: unknown) {
    super(\`request failed with status \${status}\`);
    this.name = "HttpError";
  }
}

export async function main() {
  throw new HttpError(422, { detail: "missing field" });
}
`);
    const r = await runSync(s, 'f/ops/http_error', {});
    expect(r.body.error).toMatchObject({ name: 'HttpError', message: 'request failed with status 422', extra: { status: 422, body: { detail: 'missing field' } } });
  });

  it('gives a TypeScript `Date` parameter a Date', async () => {
    await createScript(s, 'f/ops/ts_when', 'bun', `export async function main(when: Date, since?: Date) {
  return { year: when.getUTCFullYear(), iso: when.toISOString(), since: since === undefined ? "none" : since.getTime() };
}
`);
    expect((await runSync(s, 'f/ops/ts_when', { when: '2024-05-06T07:08:09Z' })).body).toEqual({ year: 2024, iso: '2024-05-06T07:08:09.000Z', since: 'none' });
    expect((await runSync(s, 'f/ops/ts_when', { when: '2024-05-06T07:08:09Z', since: '1970-01-01T00:00:01Z' })).body).toMatchObject({ since: 1000 });
  });

  it('parses datetime, date and bytes parameters of a Python main, and keeps a default when given null', async () => {
    await createScript(s, 'f/ops/py_when', 'python3', `from datetime import datetime, date
from typing import Optional


def main(when: datetime, day: Optional[date] = None, payload: bytes = b"", limit: int = 10):
    return {
        "hour": when.hour,
        "tz": str(when.tzinfo),
        "weekday": day.isoweekday() if day else None,
        "payload": payload.decode(),
        "limit": limit,
    }
`);
    const r = await runSync(s, 'f/ops/py_when', { when: '2024-05-06T07:08:09+00:00', day: '2024-05-06', payload: 'aGVsbG8=', limit: null });
    expect(r).toEqual({ status: 200, body: { hour: 7, tz: 'UTC', weekday: 1, payload: 'hello', limit: 10 } });
    expect((await runSync(s, 'f/ops/py_when', { when: '2024-05-06T23:00:00+00:00', day: '06/05/2024' })).body).toMatchObject({ hour: 23, weekday: 3 });
  });

  it('returns a Python result as Windmill writes it: bytes as base64, NaN and infinities as null', async () => {
    await createScript(s, 'f/ops/py_stats', 'python3', `import math


def main():
    values = [1.0, float("nan"), 3.0]
    return {"mean": sum(v for v in values if not math.isnan(v)) / 2, "raw": values, "worst": float("-inf"), "digest": b"hi", "note": "NaN stays a word"}
`);
    expect((await runSync(s, 'f/ops/py_stats')).body).toEqual({ mean: 2, raw: [1, null, 3], worst: null, digest: 'aGk=', note: 'NaN stays a word' });
  });

  it('gives a Python main(**kwargs) every argument its other parameters do not name', async () => {
    await createScript(s, 'f/ops/py_hook', 'python3', `def main(event: str, **kwargs):
    return {"event": event, "rest": kwargs}
`);
    expect((await runSync(s, 'f/ops/py_hook', { event: 'push', ref: 'main', commits: [1] })).body).toEqual({ event: 'push', rest: { ref: 'main', commits: [1] } });
  });

  it('passes Bash arguments as $1, $2 ... and takes the last line as the result', async () => {
    await createScript(s, 'f/ops/greet_sh', 'bash', `# shellcheck shell=bash
# arguments of the form X="$I" are parsed as parameters X of type string
name="$1"
times="\${2:-1}"

for i in $(seq 1 "$times"); do
  echo "working $i"
done
echo "Hello $name"
`);
    const script = await (await s.fetch(`${ws()}/scripts/get/p/f/ops/greet_sh`)).json();
    expect(Object.keys(script.schema.properties)).toEqual(['name', 'times']);
    expect(await runSync(s, 'f/ops/greet_sh', { name: 'world', times: '2' })).toEqual({ status: 200, body: 'Hello world' });
  });

  it('takes a Bash script\'s ./result.json as its result, as Windmill does', async () => {
    await createScript(s, 'f/ops/sh_result_file', 'bash', `name="$1"
cat > ./result.json <<EOF
{
  "name": "$name",
  "items": [1, 2]
}
EOF
echo "wrote the result"
`);
    expect(await runSync(s, 'f/ops/sh_result_file', { name: 'n' })).toEqual({ status: 200, body: { name: 'n', items: [1, 2] } });
  });

  it('takes ./result.json from a Bash script that silenced or redirected its own output', async () => {
    await createScript(s, 'f/ops/sh_quiet_result', 'bash', `exec >/dev/null 2>&1
echo "not logged"
echo '{"kept": true}' > ./result.json
`);
    expect(await runSync(s, 'f/ops/sh_quiet_result')).toEqual({ status: 200, body: { kept: true } });
    await createScript(s, 'f/ops/sh_closed_result', 'bash', `exec >&- 2>&-
echo '"after closing stdout"' > ./result.json
`);
    expect(await runSync(s, 'f/ops/sh_closed_result')).toEqual({ status: 200, body: 'after closing stdout' });
  });

  it('takes a Bash script\'s last line as JSON when it is JSON', async () => {
    await createScript(s, 'f/ops/json_sh', 'bash', `name="$1"
count="$2"
echo "processing"
echo "{\\"name\\": \\"$name\\", \\"count\\": $count}"
`);
    expect(await runSync(s, 'f/ops/json_sh', { name: 'a', count: 3 })).toEqual({ status: 200, body: { name: 'a', count: 3 } });
  });

  it('refuses Bun\'s own modules at create, naming the import, rather than failing each run', async () => {
    for (const [name, code] of [
      ['shell', 'import { $ } from "bun";\n\nexport async function main() {\n  return await $`echo hi`.text();\n}\n'],
      ['sqlite', 'import { Database } from "bun:sqlite";\n\nexport async function main() {\n  return new Database(":memory:").query("select 1 as x").get();\n}\n'],
    ]) {
      const res = await s.post(`${ws()}/scripts/create`, { path: `f/ops/bun_${name}`, language: 'bun', content: code });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatchObject({ code: 'invalid_script', field: 'content', message: expect.stringContaining('is Bun\'s own module') });
    }
  });
});

describe('sync webhook responses shaped as Windmill scripts shape them', () => {
  it('takes windmill_status_code, windmill_content_type and windmill_headers', async () => {
    await createScript(s, 'f/ops/verify', 'bun', `export async function main(signature: string = "") {
  if (signature !== "good") {
    return { windmill_status_code: 401 };
  }
  return { windmill_status_code: 201, windmill_headers: { "X-Request-Id": "abc" }, result: { success: true } };
}
`);
    await createScript(s, 'f/ops/page', 'python3', `def main(name: str = "world"):
    return {"windmill_status_code": 200, "windmill_content_type": "text/html", "result": f"<h1>Hello {name}</h1>"}
`);
    const call = (path: string, body: unknown) => s.fetch(`${ws()}/jobs/run_wait_result/p/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const refused = await call('f/ops/verify', { signature: 'bad' });
    expect(refused.status).toBe(401);
    const created = await call('f/ops/verify', { signature: 'good' });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBe('abc');
    expect(await created.json()).toEqual({ success: true });
    const page = await call('f/ops/page', { name: 'Ada' });
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toBe('<h1>Hello Ada</h1>');
  });
});

describe('script bodies as Windmill clients build them', () => {
  it('takes Windmill-only fields at their defaults and refuses one that is set, naming it and why', async () => {
    // What Windmill's client and editor send with a new script: its own fields at their defaults.
    const body = {
      path: 'f/ops/from_client',
      summary: 'From a Windmill client',
      description: '',
      content: 'export async function main(x: number) {\n  return x + 1;\n}\n',
      language: 'bun',
      kind: 'script',
      tag: null,
      is_template: false,
      envs: [],
      dedicated_worker: false,
      ws_error_handler_muted: false,
      restart_unless_cancelled: false,
      visible_to_runner_only: false,
      no_main_func: null,
      has_preprocessor: false,
      codebase: null,
      assets: [],
    };
    const created = await s.post(`${ws()}/scripts/create`, body);
    expect(created.status, await created.clone().text()).toBe(201);
    expect(await runSync(s, 'f/ops/from_client', { x: 41 })).toEqual({ status: 200, body: 42 });

    // A field set to something svc does not do is refused, nothing is stored.
    for (const [field, value, reason] of [
      ['tag', 'gpu', 'worker groups'],
      ['envs', ['FOO=bar'], 'environment variables'],
      ['kind', 'approval', 'plain script'],
    ] as const) {
      const res = await s.post(`${ws()}/scripts/create`, { ...body, path: 'f/ops/tagged', [field]: value });
      expect(res.status).toBe(400);
      const error = (await res.json()).error;
      expect(error.field).toBe(field);
      expect(error.message).toContain(reason);
    }
    expect((await s.fetch(`${ws()}/scripts/get/p/f/ops/tagged`)).status).toBe(404);
  });
});

describe('variable, resource and schedule bodies as Windmill clients build them', () => {
  it('takes their Windmill-only fields at defaults and refuses one that is set', async () => {
    const variable = { path: 'f/ops/region', value: 'eu-west-1', is_secret: false, description: '', is_oauth: false, account: null };
    expect((await s.post(`${ws()}/variables/create`, variable)).status).toBe(201);
    const oauth = await s.post(`${ws()}/variables/create`, { ...variable, path: 'f/ops/oauth_token', is_oauth: true, account: 7 });
    expect(oauth.status).toBe(400);
    expect((await oauth.json()).error).toMatchObject({ field: 'is_oauth', message: expect.stringContaining('OAuth') });
    expect((await s.fetch(`${ws()}/variables/get/f/ops/oauth_token`)).status).toBe(404);

    const resource = { path: 'f/ops/queue', value: { url: 'https://queue.example' }, resource_type: 'any', description: '', is_oauth: false };
    expect((await s.post(`${ws()}/resources/create`, resource)).status).toBe(201);

    const schedule = { path: 'f/ops/nightly', schedule: '0 0 3 * * *', timezone: 'UTC', script_path: 'f/ops/double', is_flow: false, args: { x: 1 }, enabled: false, summary: '', description: '', no_flow_overlap: false, ws_error_handler_muted: false, retry: null, tag: null, paused_until: null, cron_version: null };
    expect((await s.post(`${ws()}/schedules/create`, schedule)).status).toBe(201);
    const overlap = await s.post(`${ws()}/schedules/create`, { ...schedule, path: 'f/ops/hourly', no_flow_overlap: true });
    expect(overlap.status).toBe(400);
    expect((await overlap.json()).error.field).toBe('no_flow_overlap');
  });
});
