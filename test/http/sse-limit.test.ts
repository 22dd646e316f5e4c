import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';
import { readSse } from './sse-client.js';
import { Remote } from '../../functions/cli/remote.js';
import { followJob } from '../../functions/cli/jobs.js';
import type { Io } from '../../functions/cli/io.js';

/**
 * A stream that must end before its job (on AWS, before the api function's timeout; here after
 * SVC_SSE_MAX_SECONDS=1) ends with a `timeout` event saying where the client is, and a client that
 * reconnects from there misses nothing and gets nothing twice.
 */

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
// Outlasts a few 1 s streams, printing as it goes.
const SCRIPT = 'for i in 1 2 3 4; do echo "line $i"; sleep 1; done\necho done';

beforeAll(async () => {
  s = await startServer({ env: { SVC_SSE_MAX_SECONDS: '1' } });
  await createScript(s, 'f/stream/long', 'bash', SCRIPT);
});
afterAll(() => s?.stop());

async function jobIdOf(path: string): Promise<string> {
  for (;;) {
    const [job] = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=${path}`)).json();
    if (job) return job.id;
  }
}

describe('an SSE stream past the limit on a response', () => {
  it('ends with a timeout event naming the offsets; reconnecting from them gives the rest of the logs once and the result', async () => {
    const first = await readSse(await s.fetch(`${ws()}/jobs/run_and_stream/p/f/stream/long`, { method: 'POST' }));
    expect(first.at(-1)).toEqual({ type: 'timeout', stream_offset: 0 });
    expect(first.some((e) => e.completed)).toBe(false);

    const id = await jobIdOf('f/stream/long');
    let logs = '';
    let offsets = { stream_offset: 0, log_offset: 0 };
    let last: Record<string, any> = {};
    let streams = 0;
    while (!last.completed) {
      const events = await readSse(await s.fetch(`${ws()}/jobs_u/getupdate_sse/${id}?stream_offset=${offsets.stream_offset}&log_offset=${offsets.log_offset}`));
      streams++;
      for (const e of events) logs += e.new_logs ?? '';
      last = events.at(-1);
      // Every stream ends with either the job's end or where to resume.
      expect(last.completed === true || last.type === 'timeout', JSON.stringify(last)).toBe(true);
      offsets = { stream_offset: last.stream_offset, log_offset: last.log_offset };
    }
    expect(streams).toBeGreaterThan(1);
    expect(last).toMatchObject({ completed: true, status: 'success', only_result: 'done' });
    const job = await waitForJob(s, id);
    expect(logs).toBe(job.logs);
    expect(logs).toContain('line 4');
  });

  it('is followed to the end by the CLI, which reconnects after each timeout', async () => {
    const id = await (await s.post(`${ws()}/jobs/run/p/f/stream/long`, {})).text();
    let err = '';
    const io: Io = { out: () => undefined, err: (t) => (err += `${t}\n`), stream: (t) => (err += t), ask: async () => null, env: {}, cwd: process.cwd() };
    const job = await followJob(new Remote({ baseUrl: s.url, workspaceId: s.workspace, token: s.token }), id, io);
    expect(job).toMatchObject({ status: 'success', result: 'done' });
    for (const n of [1, 2, 3, 4]) expect(err.split(`line ${n}\n`)).toHaveLength(2);
  });
});
