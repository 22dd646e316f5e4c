import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Arguments and results past Lambda's 6 MB invocation payload (docs/aws.md, Large payloads). On the
 * AWS shell they go through the bucket (the emulated sandbox refuses a larger payload, as Lambda
 * does); the local shell has no such limit. Either way the script sees its arguments whole and
 * the caller gets the result whole.
 */

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;

beforeAll(async () => {
  // A result counts toward the job's output limit (256 KB by default): raised past 6 MB here.
  s = await startServer({ env: { SVC_JOB_TIMEOUT_SECONDS: '60', SVC_MAX_OUTPUT_BYTES: String(16 * 1024 * 1024) } });
});
afterAll(() => s?.stop());

/** 7 MiB of varied text, built the same way by the scripts below. */
const BYTES = 7 * 1024 * 1024;
const UNIT = 'abcdefghijklmnopqrstuvwxyz0123456789-';
const expected = UNIT.repeat(Math.ceil(BYTES / UNIT.length)).slice(0, BYTES);
const digest = createHash('sha256').update(expected).digest('hex');

const BIG_TS = `export function main(bytes: number) { const unit = ${JSON.stringify(UNIT)}; return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes); }`;
const BIG_PY = `def main(bytes: int):\n    unit = ${JSON.stringify(UNIT)}\n    return (unit * (bytes // len(unit) + 1))[:bytes]\n`;
const MEASURE_TS = "import { createHash } from 'node:crypto';\nexport function main(text: string) { return { length: text.length, sha256: createHash('sha256').update(text).digest('hex') }; }";
const MEASURE_PY = 'import hashlib\ndef main(text: str):\n    return {"length": len(text), "sha256": hashlib.sha256(text.encode()).hexdigest()}\n';

const step = (id: string, language: string, content: string, input_transforms: Record<string, unknown>) => ({ id, value: { type: 'rawscript', language, content, input_transforms } });

async function runFlow(path: string, modules: unknown[]): Promise<Record<string, any>> {
  const created = await s.post(`${ws()}/flows/create`, { path, summary: path, value: { modules } });
  expect(created.status, await created.clone().text()).toBe(201);
  const id = await (await s.post(`${ws()}/jobs/run/p/${path}`, {})).text();
  return waitForJob(s, id, 120_000);
}

/** Objects under the bucket's `_sandbox/` prefix the S3 emulator still holds (none in the local shell). */
function sandboxObjects(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.split('/').includes('_sandbox') && name.endsWith('._S3rver_object'));
}

describe('payloads past 6 MB', () => {
  it('hands a step arguments past 6 MB whole, in TypeScript and in Python', async () => {
    for (const [language, measure] of [['bun', MEASURE_TS], ['python3', MEASURE_PY]] as const) {
      const job = await runFlow(`u/admin/big_arg_${language}`, [
        step('a', 'bun', BIG_TS, { bytes: { type: 'static', value: BYTES } }),
        step('b', language, measure, { text: { type: 'javascript', expr: 'results.a' } }),
      ]);
      expect(job.status, JSON.stringify(job.result).slice(0, 500)).toBe('success');
      expect(job.result).toEqual({ length: BYTES, sha256: digest });
    }
  }, 240_000);

  it('returns results past 6 MB whole, from TypeScript and from Python', async () => {
    for (const [language, content] of [['bun', BIG_TS], ['python3', BIG_PY]] as const) {
      await createScript(s, `u/admin/big_result_${language}`, language, content);
      const res = await s.post(`${ws()}/jobs/run_wait_result/p/u/admin/big_result_${language}`, { bytes: BYTES });
      const text = await res.text();
      expect(res.status, text.slice(0, 500)).toBe(200);
      const result = JSON.parse(text) as string;
      expect(result.length).toBe(BYTES);
      expect(createHash('sha256').update(result).digest('hex')).toBe(digest);
    }
  }, 240_000);

  it('leaves nothing of those runs in the bucket', () => {
    expect(sandboxObjects(s.dataDir)).toEqual([]);
  });
});
