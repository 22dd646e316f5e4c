import { describe, expect, it } from 'vitest';
import { denoNpmImports, npmImports, npmRequirements, NpmImportError, withoutVersionPins } from '../../../functions/core/dependencies/npm-imports.js';
import { npmLockProblem, readNpmLock } from '../../../functions/core/dependencies/npm-lock.js';

describe('npm imports of a TypeScript script', () => {
  const names = (content: string) => npmImports(content).map((i) => [i.name, i.range]);

  it('finds bare imports, re-exports and dynamic imports, with pins and deep paths', () => {
    const content = `import a from 'lodash-es@4.17.21';
import { format } from 'date-fns/format';
import * as s3 from '@aws-sdk/client-s3@^3/dist-es/index.js';
export { x } from 'zod';
const later = await import("pg");
`;
    expect(names(content)).toEqual([
      ['lodash-es', '4.17.21'],
      ['date-fns', null],
      ['@aws-sdk/client-s3', '^3'],
      ['zod', null],
      ['pg', null],
    ]);
  });

  it('leaves out what needs no install: svc-client, Node built-ins, relative paths, URLs and schemes, type-only imports', () => {
    const content = `import * as svc from 'svc-client';
import { readFileSync } from 'fs';
import { join } from 'node:path';
import { x } from './helper.ts';
import { y } from '/f/common/lib.ts';
import z from 'npm:lodash@4';
import w from 'https://esm.sh/lodash';
import type { T } from 'types-only';
import { type U, type V } from 'types-only-too';
export type { W } from 'types-again';
`;
    expect(names(content)).toEqual([]);
  });

  it('refuses a name npm cannot have and a package pinned two ways', () => {
    expect(() => npmImports(`import x from 'Bad Name';`)).toThrow(NpmImportError);
    expect(() => npmImports(`import x from '@scope';`)).toThrow(NpmImportError);
    expect(() => npmRequirements(npmImports(`import a from 'p@1';\nimport b from 'p@2';`))).toThrow(/p is imported with two versions/);
    expect(npmRequirements(npmImports(`import a from 'p';\nimport b from 'p@2/x';\nimport c from 'q';`))).toEqual({ p: '2', q: '*' });
  });

  it('runs pinned imports without their pin', () => {
    expect(withoutVersionPins(`import a from "lodash-es@4.17.21";\nimport b from '@s/p@^1/deep.js';\nimport c from 'plain';`)).toBe(
      `import a from "lodash-es";\nimport b from "@s/p/deep.js";\nimport c from 'plain';`,
    );
  });
});

describe('npm locks', () => {
  const lock = {
    lockfileVersion: 3,
    packages: {
      '': { dependencies: { a: '*' } },
      'node_modules/a': { version: '1.0.0', resolved: 'http://reg/a/-/a-1.0.0.tgz', integrity: 'sha512-xx' },
    },
  };

  it("reads npm's package-lock and nothing else", () => {
    expect(readNpmLock(JSON.stringify(lock))?.dependencies).toEqual({ a: '*' });
    expect(readNpmLock('{"dependencies":{}}\n//bun.lock\n{}')).toBeNull();
    expect(readNpmLock('{"lockfileVersion":1,"dependencies":{}}')).toBeNull();
  });

  it('checks the lock covers the imports and sends the installer to the registry only', () => {
    const parsed = readNpmLock(JSON.stringify(lock))!;
    expect(npmLockProblem(parsed, ['a'], 'http://reg/')).toBeNull();
    expect(npmLockProblem(parsed, ['a', 'b'], 'http://reg/')).toContain('does not cover b');
    expect(npmLockProblem(parsed, ['a'], 'http://other/')).toContain('outside the instance');
    const linked = readNpmLock(JSON.stringify({ ...lock, packages: { ...lock.packages, 'node_modules/b': { link: true } } }))!;
    expect(npmLockProblem(linked, ['a'], 'http://reg/')).toContain('local folder');
    const unhashed = readNpmLock(JSON.stringify({ ...lock, packages: { ...lock.packages, 'node_modules/a': { version: '1.0.0', resolved: 'http://reg/a/-/a-1.0.0.tgz' } } }))!;
    expect(npmLockProblem(unhashed, ['a'], 'http://reg/')).toContain('no sha512 integrity');
  });
});

describe('npm: imports of a deno script', () => {
  const names = (content: string) => denoNpmImports(content).map((i) => [i.name, i.range, i.runtimeSpecifier]);

  it('finds npm: imports only, with pins, scopes, deep paths and names Node also has', () => {
    const content = `import ms from 'npm:ms@2.1.3';
import { x } from 'npm:@scope/pkg@^2/sub/path.js';
import events from 'npm:events';
import { camelCase } from 'npm:/lodash-es';
import { join } from 'jsr:@std/path@1';
import fs from 'node:fs';
import * as svc from 'svc-client';
import y from 'https://esm.sh/z';
import type { T } from 'npm:types-only';
`;
    expect(names(content)).toEqual([
      ['ms', '2.1.3', 'ms'],
      ['@scope/pkg', '^2', '@scope/pkg/sub/path.js'],
      ['events', null, 'events'],
      ['lodash-es', null, 'lodash-es'],
    ]);
  });

  it('refuses an npm: import that names no package', () => {
    expect(() => denoNpmImports(`import x from 'npm:Not A Name';`)).toThrow(NpmImportError);
    expect(() => denoNpmImports(`import x from 'npm:';`)).toThrow(/not an npm package name/);
  });
});
