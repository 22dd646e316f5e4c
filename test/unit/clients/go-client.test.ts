import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from '../../http/harness.js';
import { GO_CLIENT_DIR, goCommand } from './go-toolchain.js';

/**
 * The Go client module (clients/go): `go vet`, and its own `go test` against the real local
 * server, which this file starts and fills with the items clients/go/server_test.go reads.
 */
let s: TestServer;

beforeAll(async () => {
  s = await startServer();
  const ws = `/api/w/${s.workspace}`;
  const db = { host: 'db.internal', port: 5432, user: 'app', dbname: 'orders', password: '$var:u/admin/api_key' };
  // One after the other: the resource's `$var:` must name a variable that exists.
  const variable = await s.post(`${ws}/variables/create`, { path: 'u/admin/api_key', value: 'k-123', is_secret: true });
  const resource = await s.post(`${ws}/resources/create`, { path: 'u/admin/db', resource_type: 'postgresql', value: db });
  expect([variable.status, await resource.text()]).toEqual([201, 'u/admin/db']);
  await createScript(s, 'u/admin/echo', 'bun', 'export function main(name: string, times: number) { return { name, times }; }');
  await createScript(s, 'u/admin/boom', 'bun', 'export function main() { throw new Error("boom"); }');
});
afterAll(() => s?.stop());

describe('the Go client module', () => {
  it('is go vet clean and gofmt-formatted', async () => {
    const vet = await goCommand(['vet', './...'], GO_CLIENT_DIR);
    expect(vet, vet.output).toMatchObject({ code: 0 });
    // gofmt -l names the files it would change: none.
    expect(await goCommand(['-l', '.'], GO_CLIENT_DIR, {}, 'gofmt')).toEqual({ code: 0, output: '' });
    // On a fresh machine vet first compiles what the client imports from the standard library.
  }, 180_000);

  it('passes its go test against the running server, with no test skipped', async () => {
    const env = { SVC_TEST_URL: s.url, SVC_TEST_TOKEN: s.token, SVC_TEST_WORKSPACE: s.workspace };
    const result = await goCommand(['test', '-count=1', '-v', './...'], GO_CLIENT_DIR, env);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('--- PASS: TestServerRunsAScriptSyncAsyncAndWaits');
    expect(result.output).toContain('--- PASS: TestServerReadsASecretVariableAndAResource');
    expect(result.output).not.toContain('--- SKIP');
  }, 180_000);
});
