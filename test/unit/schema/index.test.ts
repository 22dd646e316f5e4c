import { describe, expect, it } from 'vitest';
import { LANGUAGES } from '../../../functions/ports.js';
import { inferSchema, JSON_SCHEMA_DRAFT, SchemaInferenceError } from '../../../functions/core/schema/index.js';
import { ApiError } from '../../../functions/core/common/errors.js';

const SOURCES = {
  bun: 'export async function main(x: string) {}',
  deno: 'export async function main(x: string) {}',
  nativets: 'export async function main(x: string) {}',
  python3: 'def main(x: str):\n    pass\n',
  bash: 'x="$1"\n',
  go: 'package inner\n\nfunc main(x string) (string, error) { return x, nil }\n',
} as const;

describe('inferSchema', () => {
  it.each(LANGUAGES)('reads %s scripts into the same shape', (language) => {
    expect(inferSchema(language, SOURCES[language])).toEqual({
      $schema: JSON_SCHEMA_DRAFT,
      type: 'object',
      properties: { x: { type: 'string' } },
      required: ['x'],
      order: ['x'],
    });
  });

  it.each(['bun', 'deno', 'nativets', 'python3'] as const)('throws for a %s script without main', (language) => {
    expect(() => inferSchema(language, '')).toThrow(SchemaInferenceError);
    expect(() => inferSchema(language, '')).toThrow(/no main function found/);
  });

  it('does not need main in bash', () => {
    expect(inferSchema('bash', 'echo hi').properties).toEqual({});
  });

  it('throws an ApiError the HTTP layer can answer with', () => {
    const err = (() => {
      try {
        inferSchema('python3', 'print(1)');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 400, code: 'schema_inference_failed' });
  });

  it.each([
    ['bun', `export function main(a = ${'['.repeat(50_000)}${']'.repeat(50_000)}) {}`],
    ['python3', `def main(a: ${'List['.repeat(50_000)}int${']'.repeat(50_000)}): pass`],
  ] as const)('turns absurdly nested %s brackets into a SchemaInferenceError, not a crash', (language, source) => {
    expect(() => inferSchema(language, source)).toThrow(/nested too deeply/);
  });

  it('reads long lines in linear time', () => {
    const started = performance.now();
    inferSchema('bash', `a="\${1:-}"${' '.repeat(100_000)}x\n`);
    inferSchema('python3', `def main(a: X[${'=,'.repeat(50_000)}]): pass`);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
