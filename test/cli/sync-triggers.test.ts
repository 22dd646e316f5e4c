import { describe, expect, it } from 'vitest';
import { api, apiGet, changesOf, newProject, newWorkspace, target, useServer } from './cli-harness.js';

/**
 * HTTP routes and schedules (issue 21) sync like the other kinds when svc.yaml asks for them
 * (`includeTriggers`, `includeSchedules`): pulled into `<path>.http_trigger.yaml` and
 * `<path>.schedule.yaml`, edited, added and deleted locally and pushed, with the same strictness
 * (an unknown field or a bad value is an error naming the file, and nothing is pushed).
 */

const server = useServer();

describe('svc sync: routes and schedules', () => {
  it('round-trips a signature route and a schedule, pushes edits, new files and deletions, and refuses a bad file', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/folders/create', { name: 'ops' });
    await api(s, ws, '/scripts/create', {
      path: 'f/ops/take_order',
      language: 'bun',
      content: 'export function main(id: string) { return id }',
    });
    await api(s, ws, '/flows/create', {
      path: 'f/ops/report',
      summary: 'report',
      value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bash', content: 'echo done', input_transforms: {} } }] },
    });
    await api(s, ws, '/variables/create', { path: 'f/ops/order_secret', value: 'whsec', is_secret: true });
    await api(s, ws, '/http_triggers/create', {
      path: 'f/ops/order_route',
      route_path: `${ws}/orders/:id`,
      http_method: 'post',
      script_path: 'f/ops/take_order',
      authentication_method: 'signature',
      secret_variable: 'f/ops/order_secret',
    });
    await api(s, ws, '/schedules/create', {
      path: 'f/ops/nightly',
      schedule: '0 0 3 * * *',
      timezone: 'Europe/Paris',
      script_path: 'f/ops/report',
      is_flow: true,
      enabled: false,
    });

    const project = newProject({
      'svc.yaml':
        'includeTriggers: true\nincludeSchedules: true\nskipScripts: true\nskipFlows: true\nskipVariables: true\nskipFolders: true\n',
    });
    const pulled = await project.svc(['sync', 'pull', '--yes', '--json-output', ...target(s, ws)]);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(changesOf(pulled)).toEqual(['+ http_trigger f/ops/order_route', '+ schedule f/ops/nightly']);
    expect(project.read('f/ops/nightly.schedule.yaml')).toBe(
      'schedule: 0 0 3 * * *\ntimezone: Europe/Paris\nscript_path: f/ops/report\nis_flow: true\nargs: {}\nenabled: false\nsummary: ""\ncreated_by: admin\n',
    );
    const route = project.read('f/ops/order_route.http_trigger.yaml');
    expect(route).toContain(`route_path: ${ws}/orders/:id`);
    expect(route).toContain('authentication_method: signature');
    expect(route).toContain('signature_header: X-Signature');
    expect(route).toContain('secret_variable: f/ops/order_secret');
    expect(route).not.toContain('null');
    expect(changesOf(await project.svc(['sync', 'pull', '--json-output', ...target(s, ws)]))).toEqual([]);

    // Strict: a misspelt field or a bad value stops the push, naming the file.
    project.write('f/ops/bad.schedule.yaml', 'schedule: "* * * * * *"\nscript_path: f/ops/report\nis_flow: true\nenabeld: true\n');
    const refused = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('f/ops/bad.schedule.yaml: enabeld: unknown property');
    project.write('f/ops/bad.schedule.yaml', 'schedule: "every day"\nscript_path: f/ops/report\nis_flow: true\n');
    const rejected = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(rejected.code).not.toBe(0);
    expect(rejected.stderr).toMatch(/schedule.*six fields/);
    project.remove('f/ops/bad.schedule.yaml');
    expect((await apiGet(s, ws, '/schedules/get/f/ops/bad')).status).toBe(404);

    project.write('f/ops/nightly.schedule.yaml', project.read('f/ops/nightly.schedule.yaml').replace('0 0 3 * * *', '0 30 4 * * *'));
    project.write(
      'f/ops/hourly.schedule.yaml',
      'schedule: "0 0 * * * *"\nscript_path: f/ops/take_order\nargs:\n  id: hourly\nenabled: false\non_failure: f/ops/report\n',
    );
    project.remove('f/ops/order_route.http_trigger.yaml');
    const dry = await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]);
    expect(changesOf(dry)).toEqual(['+ schedule f/ops/hourly', '- http_trigger f/ops/order_route', '~ schedule f/ops/nightly']);
    const pushed = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);

    expect((await apiGet(s, ws, '/schedules/get/f/ops/nightly')).body).toMatchObject({
      schedule: '0 30 4 * * *',
      timezone: 'Europe/Paris',
      enabled: false,
    });
    expect((await apiGet(s, ws, '/schedules/get/f/ops/hourly')).body).toMatchObject({
      timezone: 'UTC',
      args: { id: 'hourly' },
      on_failure: 'f/ops/report',
      is_flow: false,
    });
    expect((await apiGet(s, ws, '/http_triggers/get/f/ops/order_route')).status).toBe(404);
    expect(changesOf(await project.svc(['sync', 'pull', '--json-output', ...target(s, ws)]))).toEqual([]);
  });
});
