import { describe, expect, it } from 'vitest';
import { api, newProject, newWorkspace, target, useServer } from './cli-harness.js';

/** `svc <kind> list`: the workspace's items and runs as tables (or JSON), from the real server. */

const server = useServer();

describe('svc list commands', () => {
  it('lists scripts, flows, schedules, resources and variables as tables, one line per item', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/scripts/create', { path: 'f/ops/greet', language: 'python3', summary: 'says\nhello\u001b[31m', content: 'def main(name: str):\n    return name\n' });
    await api(s, ws, '/flows/create', {
      path: 'f/ops/twice',
      summary: 'twice',
      schema: { type: 'object', properties: {} },
      value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1; }\n' } }] },
    });
    await api(s, ws, '/schedules/create', { path: 'f/ops/nightly', schedule: '0 0 3 * * *', script_path: 'f/ops/greet', is_flow: false, args: { name: 'n' }, enabled: false });
    await api(s, ws, '/variables/create', { path: 'f/ops/api_key', value: 'never-shown', is_secret: true, description: 'the key' });
    await api(s, ws, '/resources/create', { path: 'f/ops/db', resource_type: 'postgresql', value: { host: 'db', port: 5432, user: 'u', dbname: 'd', password: 'p' } });
    const project = newProject();

    const scripts = await project.svc(['script', 'list', ...target(s, ws)]);
    expect(scripts.code, scripts.stderr).toBe(0);
    const lines = scripts.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^PATH\s+LANGUAGE\s+HASH\s+CREATED\s+SUMMARY$/);
    // A summary's newline and escape sequence stay inside its row.
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^f\/ops\/greet\s+python3\s+[0-9a-f]{16}\s+\S+\s+says hello \[31m$/);

    expect((await project.svc(['flow', 'list', ...target(s, ws)])).stdout).toMatch(/^f\/ops\/twice\s+\d+$/m);
    expect((await project.svc(['schedule', 'list', ...target(s, ws)])).stdout).toMatch(/^f\/ops\/nightly\s+0 0 3 \* \* \* UTC\s+script f\/ops\/greet\s+no$/m);
    expect((await project.svc(['resource', 'list', ...target(s, ws)])).stdout).toMatch(/^f\/ops\/db\s+postgresql$/m);
    const variables = await project.svc(['variable', 'list', ...target(s, ws)]);
    expect(variables.stdout).toMatch(/^f\/ops\/api_key\s+yes\s+the key$/m);
    expect(variables.stdout).not.toContain('never-shown');

    const json = await project.svc(['script', 'list', '--json-output', ...target(s, ws)]);
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ path: 'f/ops/greet', language: 'python3' })]);
  });

  it('lists runs newest first with a flow\'s steps folded under it unless --all', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/flows/create', {
      path: 'f/ops/two',
      summary: 'two steps',
      schema: { type: 'object', properties: {} },
      value: {
        modules: [
          { id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1; }\n' } },
          { id: 'b', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 2; }\n' } },
        ],
      },
    });
    const project = newProject();
    const run = await project.svc(['flow', 'run', 'f/ops/two', ...target(s, ws)]);
    expect(run.code, run.stderr).toBe(0);

    const top = await project.svc(['job', 'list', ...target(s, ws)]);
    expect(top.code, top.stderr).toBe(0);
    const rows = top.stdout.trimEnd().split('\n').slice(1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(/^[0-9a-f-]{36}\s+success\s+flow\s+f\/ops\/two\s+/);

    const all = await project.svc(['job', 'list', '--all', '--json-output', ...target(s, ws)]);
    const jobs = JSON.parse(all.stdout) as { job_kind: string }[];
    expect(jobs.map((j) => j.job_kind).sort()).toEqual(['flow', 'flowstep', 'flowstep']);

    const failed = await project.svc(['job', 'list', '--status', 'failed', ...target(s, ws)]);
    expect(failed.code).toBe(0);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toContain('no runs');
  });
});
