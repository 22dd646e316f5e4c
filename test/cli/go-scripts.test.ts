import { describe, expect, it } from 'vitest';
import { apiGet, changesOf, newProject, newWorkspace, target, useServer } from './cli-harness.js';

/** `.go` files sync like other scripts: the server infers the schema and builds them at push. */
const server = useServer();

const GREET = 'package inner\n\nfunc main(name string, times int) (string, error) {\n\treturn "hi " + name, nil\n}\n';

describe('svc sync with Go scripts', () => {
  it('pushes a .go file as a go script, pulls it back unchanged, and refuses one that does not build', async () => {
    const s = server();
    const ws = await newWorkspace(s, 'go');
    const project = newProject();
    expect((await project.svc(['init'])).code).toBe(0);
    project.write('f/ops/greet.go', GREET);

    const pushed = await project.svc(['sync', 'push', '--yes', '--json-output', ...target(s, ws)]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(changesOf(pushed)).toEqual(['+ script f/ops/greet']);
    const script = (await apiGet(s, ws, '/scripts/get/p/f/ops/greet')).body;
    expect(script).toMatchObject({ language: 'go', content: GREET, schema: { order: ['name', 'times'], properties: { name: { type: 'string' }, times: { type: 'integer' } } } });

    const again = await project.svc(['sync', 'pull', '--json-output', ...target(s, ws)]);
    expect(again.code, again.stderr).toBe(0);
    expect(changesOf(again)).toEqual([]);
    expect(project.read('f/ops/greet.go')).toBe(GREET);

    project.write('f/ops/greet.go', GREET.replace('"hi " + name', 'undefinedName'));
    const broken = await project.svc(['sync', 'push', '--yes', ...target(s, ws)]);
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toContain('main.go:4:9: undefined: undefinedName');
    expect((await apiGet(s, ws, '/scripts/get/p/f/ops/greet')).body.content).toBe(GREET);
  }, 240_000);
});
