import { describe, expect, it } from 'vitest';
import { npmLockSourceProblem, readNpmLock } from '../../../functions/core/dependencies/npm-lock.js';

const registry = 'https://registry.example.com/';
const integrity = `sha512-${Buffer.alloc(64, 1).toString('base64')}`;
const lockOf = (packages: Record<string, unknown>) => readNpmLock(JSON.stringify({ lockfileVersion: 3, packages }))!;
const tarball = (name: string, version: string) => ({ version, resolved: `${registry}${name}/-/${name.split('/').pop()}-${version}.tgz`, integrity });

describe("an npm lock's sources", () => {
  it('takes what npm writes for registry packages: ranges, tags, aliases, legacy names, peers', () => {
    const lock = lockOf({
      '': { name: 'svc-script-dependencies', version: '0.0.0', dependencies: { '@isaacs/cliui': '^8.0.2', JSONStream: '1.x || >=2.5.0 || 5.0.0 - 7.2.3', left: 'latest', any: '', star: '*' } },
      'node_modules/@isaacs/cliui': { ...tarball('@isaacs/cliui', '8.0.2'), dependencies: { 'string-width-cjs': 'npm:string-width@^4.2.0', 'wrap-ansi': '>= 2.1.2 < 3.0.0' }, peerDependencies: { react: '^16.8.0 || ^17.0.0-rc.1' } },
      'node_modules/string-width-cjs': { ...tarball('string-width', '4.2.3'), name: 'string-width' },
      'node_modules/JSONStream': { ...tarball('JSONStream', '1.3.5'), bin: { JSONStream: 'bin.js' }, license: '(MIT OR Apache-2.0)' },
      'node_modules/left': { ...tarball('left', '2.0.0-beta.2+build.7'), bundleDependencies: ['inside'] },
      // Inside its parent's tarball: npm writes no tarball or integrity for it.
      'node_modules/left/node_modules/inside': { version: '1.0.0', inBundle: true, license: 'MIT' },
      'node_modules/left/node_modules/inside/node_modules/deeper': { version: '1.0.0', inBundle: true },
    });
    expect(npmLockSourceProblem(lock, registry)).toBeNull();
  });

  it('refuses anything npm would fetch from elsewhere', () => {
    const ok = tarball('ms', '2.1.3');
    const refused: Record<string, unknown>[] = [
      { 'node_modules/ms': { ...ok, resolved: undefined } },
      { 'node_modules/ms': { ...ok, resolved: undefined, version: 'http://169.254.169.254/latest/meta-data.tgz' } },
      { 'node_modules/ms': { ...ok, version: 'file:../../etc' } },
      { 'node_modules/ms': { ...ok, resolved: 'https://elsewhere.example.com/ms.tgz' } },
      { 'node_modules/ms': { ...ok, resolved: { url: registry } } },
      { 'node_modules/ms': { ...ok, dependencies: { x: 'http://127.0.0.1:9/x.tgz' } } },
      { 'node_modules/ms': { ...ok, optionalDependencies: { x: 'git+ssh://git@internal/x.git' } } },
      { 'node_modules/ms': { ...ok, peerDependencies: { x: 'github:someone/x' } } },
      { 'node_modules/ms': { ...ok, dependencies: { x: 'file:/etc' } } },
      { 'node_modules/ms': { ...ok, dependencies: { x: 'npm:y@http://127.0.0.1/y.tgz' } } },
      { 'node_modules/ms': { ...ok, dependencies: { '../../x': '1.0.0' } } },
      { 'node_modules/ms': { ...ok, dependencies: ['x'] } },
      { 'node_modules/ms': { version: '2.1.3', inBundle: true } },
      { 'node_modules/ms': { ...ok, bundleDependencies: ['b'] }, 'node_modules/ms/node_modules/b': { version: 'http://127.0.0.1/b.tgz', inBundle: true } },
      { 'node_modules/ms': ok, 'node_modules/ms/node_modules/b': { version: '1.0.0', inBundle: true } },
      { 'node_modules/ms': ok, 'node_modules/ms/node_modules/b': { version: '1.0.0', inBundle: true, resolved: 'http://127.0.0.1/b.tgz' } },
      { '': { dependencies: { ms: 'http://127.0.0.1:9/ms.tgz' } }, 'node_modules/ms': ok },
      { '': { devDependencies: { ms: 'link:../x' } }, 'node_modules/ms': ok },
    ];
    for (const packages of refused) expect(npmLockSourceProblem(lockOf({ '': { dependencies: { ms: '*' } }, ...packages }), registry), JSON.stringify(packages)).not.toBeNull();
  });

  it('is no npm lock with an entry that is not an object', () => {
    expect(readNpmLock(JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies: { ms: '*' } }, 'node_modules/ms': null } }))).toBeNull();
  });
});
