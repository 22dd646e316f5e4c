import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../../../functions/adapters/local/config.js';
import { read, sourceFiles } from './markdown.js';

/**
 * Every environment variable the code reads, and every setting of the AWS stack, is named in the
 * configuration reference (docs/configuration.md). Variables are found in the sources under
 * functions/, bin/ and lib/ (`process.env.X`, `env.X`, `env['X']`, `env[CONSTANT]`, helpers called
 * as `f(env, 'X', ...)`, and the names read by a file that indexes `env` with a computed key), and
 * by running the local shell's config reader on an environment that records what it is asked
 * (names built from a prefix, such as `SVC_MAX_UPLOAD_BYTES`).
 */

const PAGE = 'docs/configuration.md';
/** The operating system's own, read to pass on to child processes: not svc's settings. */
const NOT_SETTINGS = new Set(['PATH', 'HOME', 'TMPDIR']);
const NAME = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;

export function variablesReadBy(source: string, constants: ReadonlyMap<string, string>): Set<string> {
  const names = new Set<string>();
  const add = (name: string | undefined): void => {
    if (name && NAME.test(name) && !name.endsWith('_')) names.add(name);
  };
  for (const m of source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)) add(m[1]);
  for (const m of source.matchAll(/\benv\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\]/g)) add(m[1]);
  for (const m of source.matchAll(/\benv\[\s*([A-Z][A-Z0-9_]*)\s*\]/g)) add(constants.get(m[1]));
  for (const m of source.matchAll(/\(\s*(?:process\.)?env\s*,\s*((?:['"][A-Z][A-Z0-9_]*['"]\s*,?\s*)+)/g)) {
    for (const literal of m[1].matchAll(/['"]([A-Z][A-Z0-9_]*)['"]/g)) add(literal[1]);
  }
  // A file that indexes the environment with a computed key reads the names it spells out.
  if (/\benv\[\s*(?:[a-z]\w*|`\$\{)/.test(source)) for (const m of source.matchAll(/'([A-Z][A-Z0-9]*_[A-Z0-9_]+)'/g)) add(m[1]);
  return names;
}

function variablesInCode(): Set<string> {
  const files = sourceFiles(['functions', 'bin', 'lib'], ['.ts', '.js', '.mjs', '.cjs']).map((path) => read(path));
  const constants = new Map<string, string>();
  for (const source of files) for (const m of source.matchAll(/const ([A-Z][A-Z0-9_]*)\s*=\s*'([A-Z][A-Z0-9_]*)'/g)) constants.set(m[1], m[2]);
  const names = new Set<string>();
  for (const source of files) for (const name of variablesReadBy(source, constants)) names.add(name);
  // What the local shell's reader asks for, names built from prefixes included.
  const asked = new Proxy({} as NodeJS.ProcessEnv, {
    get: (_target, key) => {
      if (typeof key === 'string' && NAME.test(key)) names.add(key);
      return undefined;
    },
  });
  configFromEnv(asked);
  for (const name of NOT_SETTINGS) names.delete(name);
  return names;
}

function namedIn(page: string): Set<string> {
  return new Set([...page.matchAll(/`([A-Za-z][A-Za-z0-9_]*)`/g)].map((m) => m[1]));
}

describe('the configuration reference', () => {
  it('names every environment variable the code reads', () => {
    const documented = namedIn(read(PAGE));
    const code = variablesInCode();
    expect(code.size).toBeGreaterThan(60);
    expect([...code].filter((name) => !documented.has(name)).sort()).toEqual([]);
  });

  it('names every AWS stack setting (CDK context)', () => {
    const documented = namedIn(read(PAGE));
    const settings = [...read('lib/config.ts').matchAll(/read\('([a-zA-Z]+)'\)/g)].map((m) => m[1]);
    expect(settings.length).toBeGreaterThan(15);
    expect(settings.filter((name) => !documented.has(name))).toEqual([]);
  });

  it('finds variables however the code reads them', () => {
    const source = [
      "const a = process.env.SVC_ONE;",
      "const b = env['SVC_TWO'];",
      'const c = env[ALLOWED];',
      "const d = int(env, 'THREE_X', 5);",
      "const e = secretSource(env, 'FOUR_ARN', 'FOUR_HEX');",
      'const f = req.env.OV_USERNAME;',
    ].join('\n');
    expect([...variablesReadBy(source, new Map([['ALLOWED', 'SVC_FIVE']]))].sort()).toEqual(
      ['FOUR_ARN', 'FOUR_HEX', 'OV_USERNAME', 'SVC_FIVE', 'SVC_ONE', 'SVC_TWO', 'THREE_X'],
    );
    const computed = "const read = (name) => env[`${prefix}${name}`];\nread('MAX_THING_BYTES');";
    expect([...variablesReadBy(computed, new Map())]).toEqual(['MAX_THING_BYTES']);
  });
});
