import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../http/harness.js';
import { newProject, newWorkspace, target } from './cli-harness.js';

/** `svc upload`: a file through an upload session, in parts, printed as the object a payload names. */
let s: TestServer;
const PART = 5 * 1024 * 1024;

beforeAll(async () => {
  s = await startServer({ env: { SVC_UPLOAD_PART_BYTES: String(PART) } });
});
afterAll(() => s?.stop());

describe('svc upload', () => {
  it('uploads a file in parts and prints the object the job then receives byte for byte', async () => {
    const ws = await newWorkspace(s);
    await s.post(`/api/w/${ws}/workspaces/edit_object_storage`, { enabled: true });
    expect((await s.post(`/api/w/${ws}/scripts/create`, { path: 'f/etl/load', language: 'bun', content: 'export function main(files) { return files; }' })).status).toBe(201);
    const text = randomBytes(PART).toString('hex').slice(0, PART + 4321);
    const bytes = Buffer.from(text);
    const project = newProject();
    project.write('data/big.csv', text);

    const result = await project.svc(['upload', 'f/etl/load', 'data/big.csv', '--content-type', 'text/csv', ...target(s, ws)]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('part 2 of 2 sent');
    const object = JSON.parse(result.stdout);
    expect(object).toMatchObject({ filename: 'big.csv', content_type: 'text/csv', size: bytes.length });

    const run = await s.fetch(`/api/w/${ws}/jobs/run_wait_result/p/f/etl/load`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ files: [object] }) });
    const [given] = await run.json();
    const download = await s.fetch(`/api/w/${ws}/job_helpers/download_s3_file?file_key=${encodeURIComponent(given.s3)}`);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('fails with the server\'s reason for a script that is not there, and for a file that is not there', async () => {
    const ws = await newWorkspace(s);
    await s.post(`/api/w/${ws}/workspaces/edit_object_storage`, { enabled: true });
    const project = newProject({ 'small.txt': 'hello' });
    const missingScript = await project.svc(['upload', 'f/etl/none', 'small.txt', ...target(s, ws)]);
    expect(missingScript.code).not.toBe(0);
    expect(missingScript.stderr).toMatch(/404.*f\/etl\/none/);
    const missingFile = await project.svc(['upload', 'f/etl/none', 'nope.txt', ...target(s, ws)]);
    expect(missingFile.code).not.toBe(0);
    expect(missingFile.stderr).toContain('cannot read nope.txt');
  });
});
