import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GoCompiler } from '../../../functions/runtime/go-build.js';
import { makeRunner, request, resultOf, runOnce, schemaOf } from './runtime-helpers.js';

/**
 * Go scripts importing other modules: refused without an instance module proxy, built from the
 * proxy when there is one. The proxy here is a directory in the GOPROXY layout (file://), holding
 * one module this test writes, so nothing is downloaded.
 */
const root = mkdtempSync(join(tmpdir(), 'svc-go-proxy-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SCRIPT = 'package inner\n\nimport "example.com/greet"\n\nfunc main(name string) (string, error) {\n\treturn greet.Hello(name), nil\n}\n';

function writeProxy(): string {
  const module = 'example.com/greet@v1.0.0';
  const source = join(root, 'src');
  mkdirSync(join(source, module), { recursive: true });
  writeFileSync(join(source, module, 'go.mod'), 'module example.com/greet\n\ngo 1.19\n');
  writeFileSync(join(source, module, 'greet.go'), 'package greet\n\n// Hello greets.\nfunc Hello(name string) string { return "hi " + name }\n');
  const versions = join(root, 'proxy', 'example.com', 'greet', '@v');
  mkdirSync(versions, { recursive: true });
  writeFileSync(join(versions, 'list'), 'v1.0.0\n');
  writeFileSync(join(versions, 'v1.0.0.info'), '{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}\n');
  writeFileSync(join(versions, 'v1.0.0.mod'), 'module example.com/greet\n\ngo 1.19\n');
  // A module zip holds its files under <module>@<version>/.
  const zip = 'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], "w") as z:\n    for f in sys.argv[2:]: z.write(f)\n';
  execFileSync('python3', ['-c', zip, join(versions, 'v1.0.0.zip'), `${module}/go.mod`, `${module}/greet.go`], { cwd: source });
  return `file://${join(root, 'proxy')}`;
}

describe('Go modules', () => {
  it('are refused without a module proxy, naming the import', async () => {
    const compiler = new GoCompiler({ cacheDir: join(root, 'no-proxy') });
    const refused = await compiler.compile('go', SCRIPT);
    expect(refused).toEqual({ ok: false, message: expect.stringContaining('main.go imports example.com/greet: this server builds Go scripts with the standard library and the svc client only') });
  });

  it('come from the instance module proxy when there is one, and the script runs with them', async () => {
    const cacheDir = join(root, 'with-proxy');
    const compiler = new GoCompiler({ cacheDir, moduleProxy: writeProxy() });
    expect(await compiler.compile('go', SCRIPT)).toEqual({ ok: true });
    const { runner, dispose } = makeRunner({ goCacheDir: cacheDir });
    try {
      const { outcome } = await runOnce(runner, request('go', SCRIPT, { schema: schemaOf('name'), args: { name: 'ada' } }));
      expect(resultOf(outcome)).toBe('hi ada');
    } finally {
      await dispose();
    }
  }, 240_000);
});
