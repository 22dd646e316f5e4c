import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * `deno` scripts run on a real Deno (issue 15, item 6): the `Deno` global, `npm:` imports, the
 * job's environment, `$var:` arguments and svc-client, confined like every job.
 */
let s: TestServer;
/** The Deno the project pins: the one `npm ci` installs. */
const PINNED_DENO: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).dependencies.deno;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const run = async (path: string, body: unknown = {}) => (await s.fetch(`${ws()}/jobs/run_wait_result/p/${path}`, json(body))).json();

beforeAll(async () => {
  // Room for a cold Deno start and an npm download on a loaded machine.
  s = await startServer({ env: { SVC_JOB_TIMEOUT_SECONDS: '60' } });
});
afterAll(() => s?.stop());

describe('deno scripts', () => {
  it('run on Deno: the Deno global answers with its version', async () => {
    await createScript(s, 'u/admin/deno_version', 'deno', 'export function main() { return { deno: Deno.version.deno, node: typeof process === "undefined" ? null : process.release?.name }; }');
    const result = await run('u/admin/deno_version');
    expect(result.deno).toBe(PINNED_DENO);
  });

  it('import npm: packages', async () => {
    await createScript(s, 'u/admin/deno_npm', 'deno', 'import ms from "npm:ms@2.1.3";\nexport function main(span: string) { return ms(span); }');
    expect(await run('u/admin/deno_npm', { span: '2 days' })).toBe(172_800_000);
  });

  it('get $var: arguments, the job environment and svc-client', async () => {
    const created = await s.fetch(`${ws()}/variables/create`, json({ path: 'u/admin/deno_secret', value: 'open-sesame', is_secret: true, description: 'd' }));
    expect(created.status).toBe(201);
    await createScript(
      s,
      'u/admin/deno_client',
      'deno',
      `import * as svc from 'svc-client';
       export async function main(secret: string) {
         return { secret, fromClient: await svc.getVariable('u/admin/deno_secret'), workspace: Deno.env.get('OV_WORKSPACE'), base: Deno.env.get('BASE_INTERNAL_URL'), context: svc.getContext() };
       }`,
    );
    const result = await run('u/admin/deno_client', { secret: '$var:u/admin/deno_secret' });
    expect(result).toMatchObject({ secret: 'open-sesame', fromClient: 'open-sesame', workspace: s.workspace, context: { workspace: s.workspace, jobPath: 'u/admin/deno_client' } });
    // The service's own address, or inside the job network boundary its namespace's API port (svc-client reached it either way).
    expect([s.url, 'http://127.0.0.1:80']).toContain(result.base);
  });

  it('log what they print and fail with the error they throw', async () => {
    await createScript(s, 'u/admin/deno_fail', 'deno', 'export function main() { console.log("before"); console.error("on stderr"); throw new RangeError("too far"); }');
    const started = await s.fetch(`${ws()}/jobs/run/p/u/admin/deno_fail`, json({}));
    const job = await waitForJob(s, await started.text(), 60_000);
    expect(job.status).toBe('failed');
    expect(job.result.error).toMatchObject({ name: 'RangeError', message: 'too far' });
    expect(job.logs).toContain('before\non stderr');
  });

  it('stream what an async generator yields', async () => {
    await createScript(s, 'u/admin/deno_stream', 'deno', 'export async function* main() { yield "a"; yield "b"; return { n: 2 }; }');
    expect(await run('u/admin/deno_stream')).toEqual({ n: 2, wm_stream: 'ab' });
  });

  it('may not read outside their job directory', async () => {
    const db = join(s.dataDir, 'svc.db');
    await createScript(s, 'u/admin/deno_peek', 'deno', `export async function main() { try { await Deno.readFile(${JSON.stringify(db)}); return "read it"; } catch (e) { return (e as Error).name; } }`);
    expect(await run('u/admin/deno_peek')).toMatch(/NotCapable|PermissionDenied|NotFound/);
  });
});
