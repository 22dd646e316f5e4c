import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * A body's bytes reach the service as sent, in both shells (API Gateway passes every body on
 * base64-encoded): bytes that are not UTF-8 where text is expected are refused with a 400, never
 * replaced by U+FFFD and stored as if the caller had sent them.
 */
let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
/** "café" with the é in Latin-1: one byte, 0xE9, which is not UTF-8. */
const latin1 = (json: string) => Buffer.concat([Buffer.from(json.slice(0, json.indexOf('é'))), Buffer.from([0xe9]), Buffer.from(json.slice(json.indexOf('é') + 1))]);

beforeAll(async () => {
  s = await startServer();
  await createScript(s, 'f/bytes/echo', 'bun', 'export function main(name: string = "", raw_string: string = "") { return { name, raw_string }; }');
});
afterAll(() => s?.stop());

async function jobsOf(path: string): Promise<unknown[]> {
  return (await s.fetch(`${ws()}/jobs/list?script_path_exact=${path}`)).json();
}

describe('request bodies that are not UTF-8', () => {
  it('are refused by a webhook with a 400 that says so, and run nothing', async () => {
    for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream']) {
      const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/bytes/echo`, { method: 'POST', headers: { 'content-type': type }, body: latin1('{"name":"café"}') });
      expect(res.status, type).toBe(400);
      const body = await res.json();
      expect(body.error.code).toBe('invalid_utf8');
      expect(body.error.message).toMatch(/not valid UTF-8/);
    }
    expect(await jobsOf('f/bytes/echo')).toEqual([]);
  });

  it('are refused by a JSON endpoint, which stores nothing', async () => {
    const res = await s.fetch(`${ws()}/variables/create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: latin1('{"path":"f/bytes/v","value":"café","is_secret":false,"description":""}') });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('invalid_utf8');
    expect((await s.fetch(`${ws()}/variables/get/f/bytes/v`)).status).toBe(404);
  });

  it('are refused by a JSON endpoint when the Content-Type names another charset, or two', async () => {
    const create = (contentType: string, path: string) =>
      s.fetch(`${ws()}/variables/create`, { method: 'POST', headers: { 'content-type': contentType }, body: JSON.stringify({ path, value: 'x', is_secret: false, description: '' }) });
    for (const type of ['application/json; charset=latin1', 'application/json; charset=utf-8; charset=latin1', 'application/json; charset=utf-16']) {
      const res = await create(type, 'f/bytes/refused');
      expect(res.status, type).toBe(415);
      expect((await res.json()).error.message).toMatch(/UTF-8/);
    }
    expect((await s.fetch(`${ws()}/variables/get/f/bytes/refused`)).status).toBe(404);
    expect((await create('application/json; charset="UTF-8"', 'f/bytes/quoted')).status).toBe(201);
    expect((await create('application/json;charset=utf8', 'f/bytes/bare')).status).toBe(201);
  });

  it('while UTF-8 text, a BOM-less é and an emoji, reaches the script unchanged', async () => {
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/bytes/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"name":"café 🚀"}') });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: 'café 🚀', raw_string: '' });
  });
});
