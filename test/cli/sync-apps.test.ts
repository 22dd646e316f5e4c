import { describe, expect, it } from 'vitest';
import { api, apiGet, changesOf, newProject, newWorkspace, target, useServer } from './cli-harness.js';

/**
 * Apps (issue 20 made them a stored, versioned kind) sync like the other kinds: pulled into
 * `<path>.app/app.yaml`, edited and pushed as a new version, deleted only when their folder is.
 */

const server = useServer();

describe('svc sync: apps', () => {
  it('pulls an app into <path>.app/app.yaml, pushes an edit as a new version, and pushes a new app', async () => {
    const s = server();
    const ws = await newWorkspace(s);
    await api(s, ws, '/folders/create', { name: 'ops' });
    await api(s, ws, '/apps/create', { path: 'f/ops/dashboard', summary: 'orders', value: { grid: [{ id: 'a', type: 'text', text: 'Orders' }] } });
    const project = newProject();
    expect((await project.svc(['init'])).code).toBe(0);

    const pulled = await project.svc(['sync', 'pull', '--yes', '--json-output', ...target(s, ws)]);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(changesOf(pulled)).toContain('+ app f/ops/dashboard');
    const file = project.read('f/ops/dashboard.app/app.yaml');
    expect(file).toContain('summary: orders');
    expect(file).toContain('text: Orders');

    project.write('f/ops/dashboard.app/app.yaml', file.replace('text: Orders', 'text: All orders'));
    project.write('f/ops/stock.app/app.yaml', 'summary: stock\nvalue:\n  grid: []\n');
    const dry = await project.svc(['sync', 'push', '--dry-run', '--json-output', ...target(s, ws)]);
    expect(changesOf(dry)).toEqual(['+ app f/ops/stock', '~ app f/ops/dashboard']);
    const pushed = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);

    const app = (await apiGet(s, ws, '/apps/get/p/f/ops/dashboard')).body;
    expect(app.value.grid[0].text).toBe('All orders');
    expect((await apiGet<unknown[]>(s, ws, '/apps/history/p/f/ops/dashboard')).body).toHaveLength(2);
    expect((await apiGet(s, ws, '/apps/get/p/f/ops/stock')).body).toMatchObject({ summary: 'stock' });
    expect(changesOf(await project.svc(['sync', 'pull', '--json-output', ...target(s, ws)]))).toEqual([]);
  });
});
