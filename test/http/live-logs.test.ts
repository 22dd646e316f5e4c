import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';
import { readSse } from './sse-client.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.stop());

const ws = () => `/api/w/${s.workspace}`;

const CHATTY = 'export async function main() { console.log("first line"); await new Promise((r) => setTimeout(r, 4000)); console.log("second line"); return 1; }';

type Update = { completed?: boolean; new_logs?: string; log_offset?: number; new_result_stream?: string; status?: string };

const getJob = async (id: string) => (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();

describe('jobs_u/getupdate: live logs', () => {
  it('shows the first line while the job still runs, then the rest from the offset', async () => {
    await createScript(
      s,
      'u/admin/chatty',
      'bun',
      'export async function main() { console.log("first line"); await new Promise((r) => setTimeout(r, 4000)); console.log("second line"); return 1; }',
    );
    const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/chatty`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).text();

    let update: { running: boolean; completed: boolean; new_logs: string; log_offset: number };
    do {
      const res = await s.fetch(`${ws()}/jobs_u/getupdate/${id}?log_offset=0`);
      expect(res.status).toBe(200);
      update = await res.json();
    } while (!update.new_logs.includes('first line') && !update.completed);
    // The first line was readable before the job finished: it was written live, not at completion.
    expect(update).toMatchObject({ running: true, completed: false });
    expect(update.new_logs).not.toContain('second line');

    await waitForJob(s, id);
    const rest = await (await s.fetch(`${ws()}/jobs_u/getupdate/${id}?log_offset=${update.log_offset}`)).json();
    expect(rest.completed).toBe(true);
    expect(rest.running).toBe(false);
    expect(rest.new_logs).toContain('second line');
    expect(rest.new_logs).not.toContain('first line');
    const all = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    expect(rest.log_offset).toBe(all.logs.length);
  });

  it('refuses a bad offset with 400 and an unknown job with 404', async () => {
    const bad = await s.fetch(`${ws()}/jobs_u/getupdate/whatever?log_offset=-1`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.field).toBe('log_offset');
    expect((await s.fetch(`${ws()}/jobs_u/getupdate/no-such-job?log_offset=0`)).status).toBe(404);
  });
});

describe('jobs_u/getupdate_sse: new_logs with log_offset', () => {
  it('carries the first line while the job still runs, then the rest, each with the offset reached', async () => {
    await createScript(s, 'u/admin/chatty_sse', 'bun', CHATTY);
    const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/chatty_sse`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).text();
    // The job's status the moment the first line arrived over the stream.
    let statusAtFirstLine: Promise<string> | undefined;
    const events: Update[] = await readSse(await s.fetch(`${ws()}/jobs_u/getupdate_sse/${id}?log_offset=0`), (e: Update) => {
      if (e.new_logs?.includes('first line')) statusAtFirstLine ??= getJob(id).then((j) => j.status);
    });
    expect(await statusAtFirstLine).toBe('running');
    const first = events.find((e) => e.new_logs?.includes('first line'))!;
    expect(first.completed).toBeUndefined();
    expect(first.new_logs).not.toContain('second line');
    // Progress updates keep the spec's fields.
    expect(first).toMatchObject({ type: 'update', new_result_stream: '' });

    const last = events.at(-1)!;
    expect(last.completed).toBe(true);
    const job = await getJob(id);
    // Every piece once, in order: together they are the job's logs, and the last offset is their length.
    expect(events.map((e) => e.new_logs ?? '').join('')).toBe(job.logs);
    expect(last.log_offset).toBe(job.logs.length);
    let offset = 0;
    for (const e of events) {
      offset += (e.new_logs ?? '').length;
      expect(e.log_offset).toBe(offset);
    }
  });

  it('starts from log_offset, refuses a bad one with 400, and leaves the stream webhook as the spec has it', async () => {
    await createScript(s, 'u/admin/quick_logs', 'bun', 'export function main() { console.log("alpha"); console.log("omega"); return 2; }');
    const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/quick_logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).text();
    const job = await waitForJob(s, id);
    const from = job.logs.indexOf('omega');
    const events: Update[] = await readSse(await s.fetch(`${ws()}/jobs_u/getupdate_sse/${id}?log_offset=${from}`));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ completed: true, new_logs: job.logs.slice(from), log_offset: job.logs.length });

    const bad = await s.fetch(`${ws()}/jobs_u/getupdate_sse/${id}?log_offset=x`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.field).toBe('log_offset');

    const streamed: Update[] = await readSse(await s.fetch(`${ws()}/jobs/run_and_stream/p/u/admin/quick_logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }));
    expect(streamed.at(-1)).toMatchObject({ completed: true, only_result: 2 });
    expect(streamed.some((e) => 'new_logs' in e || 'log_offset' in e)).toBe(false);
  });
});

describe('flow steps stream their logs as scripts do', () => {
  it("shows a running step's first line before the step ends, by getupdate and by getupdate_sse", async () => {
    const flow = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/chatty_flow',
      summary: 'chatty',
      schema: { type: 'object', properties: {} },
      value: { modules: [{ id: 'talk', value: { type: 'rawscript', language: 'bun', content: CHATTY, input_transforms: {} } }] },
    });
    expect(flow.status).toBe(201);
    const flowId = await (await s.fetch(`${ws()}/jobs/run/f/u/admin/chatty_flow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).text();
    let step: { id: string; flow_module: string } | undefined;
    while (!step) {
      const jobs: { id: string; parent_job: string | null; flow_module: string }[] = await (await s.fetch(`${ws()}/jobs/list?per_page=100`)).json();
      step = jobs.find((j) => j.parent_job === flowId);
    }
    expect(step.flow_module).toBe('talk');

    let polled: { running: boolean; completed: boolean; new_logs: string };
    do polled = await (await s.fetch(`${ws()}/jobs_u/getupdate/${step.id}?log_offset=0`)).json();
    while (!polled.new_logs.includes('first line') && !polled.completed);
    expect(polled).toMatchObject({ running: true, completed: false });

    let statusAtFirstLine: Promise<string> | undefined;
    const events: Update[] = await readSse(await s.fetch(`${ws()}/jobs_u/getupdate_sse/${step.id}?log_offset=0`), (e: Update) => {
      if (e.new_logs?.includes('first line')) statusAtFirstLine ??= getJob(step!.id).then((j) => j.status);
    });
    expect(await statusAtFirstLine).toBe('running');
    expect(events.map((e) => e.new_logs ?? '').join('')).toBe((await getJob(step.id)).logs);
    expect((await waitForJob(s, flowId)).status).toBe('success');
  });
});
